// daemon/kernel/one-at-a-time.ts: pieces of work never overlap and start in the order given; a failure
// reaches only its own caller and does not stop the work after it (fast-check over random outcomes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OneAtATime } from '../../../daemon/kernel/one-at-a-time';

void test('property: work runs in order, never two at once, each caller gets its own result or failure', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.record({ fails: fc.boolean(), sync: fc.boolean() }), { minLength: 1, maxLength: 12 }), async (works) => {
      const queue = new OneAtATime();
      const started: number[] = [];
      let running = 0;
      const results = works.map((w, i) =>
        queue.run(async () => {
          assert.equal(running, 0, 'no overlap');
          running++;
          started.push(i);
          if (!w.sync) await new Promise(setImmediate);
          running--;
          if (w.fails) throw new Error(`work ${i}`);
          return i;
        }),
      );
      const settled = await Promise.allSettled(results);
      assert.deepEqual(started, works.map((_, i) => i));
      settled.forEach((s, i) => assert.deepEqual(s, works[i]!.fails ? { status: 'rejected', reason: new Error(`work ${i}`) } : { status: 'fulfilled', value: i }));
    }),
    { numRuns: 50 },
  );
});

void test('synchronous work and a synchronous throw are queued like any other', async () => {
  const queue = new OneAtATime();
  const order: string[] = [];
  const a = queue.run(() => (order.push('a'), 1));
  const b = queue.run(() => {
    order.push('b');
    throw new Error('b');
  });
  const c = queue.run(() => (order.push('c'), 3));
  assert.equal(await a, 1);
  await assert.rejects(b, /^Error: b$/);
  assert.equal(await c, 3);
  assert.deepEqual(order, ['a', 'b', 'c']);
});
