import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { WorkingMemory, WorkingMemoryRegistry } from '../../../daemon/memory/working-memory';

void test('working memory stays within its bounds and evicts least recently used first, also when shrunk (fast-check model)', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('set' as const), key: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), value: fc.string({ maxLength: 30 }) }),
    fc.record({ kind: fc.constant('get' as const), key: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f') }),
    fc.record({ kind: fc.constant('delete' as const), key: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f') }),
    fc.record({ kind: fc.constant('shrink' as const), key: fc.constant(''), bytes: fc.integer({ min: -8, max: 80 }) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
      const wm = new WorkingMemory({ maxItems: 4, maxBytes: 64 });
      const model: [string, string][] = [];
      const size = (): number => model.reduce((s, [k, v]) => s + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
      for (const o of ops) {
        const i = model.findIndex(([k]) => k === o.key);
        if (o.kind === 'set') {
          if (i >= 0) model.splice(i, 1);
          model.push([o.key, o.value]);
          wm.set(o.key, o.value);
          while (model.length > 4 || size() > 64) model.shift();
        } else if (o.kind === 'get') {
          assert.equal(wm.get(o.key), i >= 0 ? model[i]![1] : undefined);
          if (i >= 0) model.push(...model.splice(i, 1));
        } else if (o.kind === 'delete') {
          assert.equal(wm.delete(o.key), i >= 0);
          if (i >= 0) model.splice(i, 1);
        } else {
          const evicted: string[] = [];
          while (size() > Math.max(0, o.bytes)) evicted.push(model.shift()![0]);
          assert.deepEqual(wm.shrinkTo(o.bytes), evicted);
        }
        assert.equal(wm.bytes, size());
        assert.deepEqual(wm.entries().map((e) => [e.key, e.value]), model);
        assert.ok(wm.size <= 4 && wm.bytes <= 64);
      }
    }),
  );
});

void test('a session ending clears its working memory; others are untouched', () => {
  const reg = new WorkingMemoryRegistry({ maxItems: 10, maxBytes: 1000 });
  reg.forSession('s1').set('k', 'v');
  reg.forSession('s2').set('k', 'w');
  reg.end('s1');
  assert.equal(reg.has('s1'), false);
  assert.equal(reg.forSession('s1').get('k'), undefined);
  assert.equal(reg.forSession('s2').get('k'), 'w');
  assert.throws(() => reg.forSession('s3').set('big', 'x'.repeat(2000)), RangeError);
});
