// Reconnect delays: 1 s doubling to 5 minutes, drawn from the upper half of each step; a link that
// stayed up a minute starts the count again, one that drops at once keeps backing off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RECONNECT_INITIAL_MS, RECONNECT_MAX_MS, ReconnectPolicy, reconnectDelay, STABLE_LINK_MS } from '../../sync/link-backoff';

void test('the steps double from 1 s and stop at 5 minutes', () => {
  assert.deepEqual([0, 1, 2, 8, 9, 50].map((n) => reconnectDelay(n, () => 0.999999)), [1000, 2000, 4000, 256_000, 300_000, 300_000]);
  assert.deepEqual([0, 1].map((n) => reconnectDelay(n, () => 0)), [500, 1000]);
});

void test('property: every delay lies in [step/2, step], never shrinks with the attempt at one draw, and never passes 5 minutes', () => {
  fc.assert(
    fc.property(fc.integer({ min: -5, max: 10_000 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, draw) => {
      const step = Math.min(RECONNECT_MAX_MS, RECONNECT_INITIAL_MS * 2 ** Math.max(0, attempt));
      const delay = reconnectDelay(attempt, () => draw);
      assert.ok(delay >= step / 2 && delay <= step, `attempt ${attempt}: ${delay}`);
      assert.ok(reconnectDelay(attempt + 1, () => draw) >= delay);
    }),
  );
});

void test('a stable link resets the count; a link that drops at once does not', () => {
  const policy = new ReconnectPolicy(() => 0.999999);
  assert.deepEqual([policy.linkDown(0), policy.linkDown(0), policy.linkDown(0)], [1000, 2000, 4000]);
  policy.linkUp(10_000);
  assert.equal(policy.linkDown(10_000 + STABLE_LINK_MS - 1), 8000, 'up less than a minute: still backing off');
  policy.linkUp(100_000);
  assert.equal(policy.linkDown(100_000 + STABLE_LINK_MS), 1000, 'a stable link starts again');
  assert.equal(policy.attempts, 1);
});
