import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EventBus } from '../../../daemon/kernel/event-bus';

void test('listeners are keyed by owner: off(owner) removes all of its listeners and no one else', () => {
  const seen: string[] = [];
  const bus = new EventBus<number>(() => assert.fail('no listener fails'));
  bus.on('a', (n) => seen.push(`a1:${n}`));
  bus.on('a', (n) => seen.push(`a2:${n}`));
  bus.on('b', (n) => seen.push(`b:${n}`));
  bus.emit(1);
  bus.off('a');
  bus.emit(2);
  assert.deepEqual(seen, ['a1:1', 'a2:1', 'b:1', 'b:2']);
  assert.deepEqual(bus.owners(), ['b']);
});

void test('property: a throwing listener is reported with its owner and never stops the others', () => {
  fc.assert(
    fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }), (throws) => {
      const errors: string[] = [];
      const called: number[] = [];
      const bus = new EventBus<string>((owner) => errors.push(owner));
      throws.forEach((bad, i) =>
        bus.on(`o${i}`, () => {
          called.push(i);
          if (bad) throw new Error(`listener ${i}`);
        }),
      );
      bus.emit('x');
      assert.deepEqual(called, throws.map((_, i) => i));
      assert.deepEqual(errors, throws.flatMap((bad, i) => (bad ? [`o${i}`] : [])));
    }),
  );
});
