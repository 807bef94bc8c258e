// skills/run-queue.ts: the pool's bookkeeping. A property over any sequence of offers, ends and drains
// checked against a plain model: never more than `slots` running nor `maxWaiting` waiting, items start
// in the order they were offered, each accepted item starts exactly once (unless drained), and a refused
// one never starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RunQueue } from '../../skills/run-queue';

test('the first `slots` offers run, the next `maxWaiting` wait, one more is refused', () => {
  const queue = new RunQueue<number>(2, 1);
  assert.deepEqual([1, 2, 3, 4].map((n) => queue.offer(n)), ['run', 'run', 'wait', 'full']);
  assert.equal(queue.done(), 3);
  assert.equal(queue.done(), undefined);
  assert.deepEqual([queue.running, queue.queued], [1, 0]);
});

test('done() without a running item is a bug, not a silent count below zero', () => {
  assert.throws(() => new RunQueue<number>(1, 1).done(), /without a running item/);
});

type Op = { op: 'offer' } | { op: 'done' } | { op: 'drain' };
const step = fc.oneof({ arbitrary: fc.constant<Op>({ op: 'offer' }), weight: 5 }, { arbitrary: fc.constant<Op>({ op: 'done' }), weight: 4 }, { arbitrary: fc.constant<Op>({ op: 'drain' }), weight: 1 });
const ops = fc.array(step, { maxLength: 200, size: 'max' });

test('property: bounds hold, order is kept, every accepted item starts once', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 5 }), ops, (slots, maxWaiting, sequence) => {
      const queue = new RunQueue<number>(slots, maxWaiting);
      const started: number[] = [];
      const refused = new Set<number>();
      const drained = new Set<number>();
      let offered = 0;
      let running = 0;
      for (const step of sequence) {
        if (step.op === 'offer') {
          const item = offered++;
          const expected = running < slots ? 'run' : queue.queued < maxWaiting ? 'wait' : 'full';
          const admission = queue.offer(item);
          assert.equal(admission, expected);
          if (admission === 'run') {
            started.push(item);
            running++;
          } else if (admission === 'full') refused.add(item);
        } else if (step.op === 'done' && running > 0) {
          const next = queue.done();
          if (next === undefined) running--;
          else started.push(next);
        } else if (step.op === 'drain') {
          for (const item of queue.drain()) drained.add(item);
        }
        assert.equal(queue.running, running);
        assert.ok(queue.running <= slots && queue.queued <= maxWaiting);
        // Nothing waits while a slot is free.
        assert.ok(queue.queued === 0 || queue.running === slots);
      }
      assert.deepEqual(started, [...started].sort((a, b) => a - b), 'items start in the order offered');
      assert.equal(new Set(started).size, started.length, 'no item starts twice');
      for (const item of started) assert.ok(!refused.has(item) && !drained.has(item));
      assert.equal(started.length + refused.size + drained.size + queue.queued, offered, 'every offered item is started, refused, drained or waiting');
    }),
    { numRuns: 300 },
  );
});
