// Reconnect delays: 100 ms doubling to 30 s, drawn from the upper half of each step (equal jitter).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, backoffDelay } from '../../phone-bridge/backoff';

void test('the steps double from 100 ms and stop at 30 s; jitter spans the upper half of the step', () => {
  assert.deepEqual([0, 1, 2, 3, 8, 9, 50].map((n) => backoffDelay(n, () => 0.999999)), [100, 200, 400, 800, 25_600, 30_000, 30_000]);
  assert.deepEqual([0, 1, 9].map((n) => backoffDelay(n, () => 0)), [50, 100, 15_000]);
});

void test('property: every delay lies in [step/2, step], never decreases with the attempt at the same draw, and never passes 30 s', () => {
  fc.assert(
    fc.property(fc.integer({ min: -5, max: 10_000 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, draw) => {
      const step = Math.min(BACKOFF_MAX_MS, BACKOFF_INITIAL_MS * 2 ** Math.min(Math.max(0, attempt), 30));
      const delay = backoffDelay(attempt, () => draw);
      assert.ok(delay >= step / 2 && delay <= step, `attempt ${attempt}: ${delay} outside [${step / 2}, ${step}]`);
      assert.ok(backoffDelay(attempt + 1, () => draw) >= delay);
    }),
  );
});
