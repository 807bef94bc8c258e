// Cooldown arithmetic (docs/providers.md "Cooldowns"): fixed cases and fast-check properties.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { backoff, cooldownMs, RETRY_AFTER_CAP_MS, RETRY_AFTER_FLOOR_MS, type CooldownSettings } from '../../../daemon/providers/cooldown-policy';
import type { ProviderErrorClass } from '../../../daemon/providers/provider';
import { parseSettings } from '../../../daemon/config/load-settings';

const policy: CooldownSettings = parseSettings({}).providers.cooldown;
const CLASSES: ProviderErrorClass[] = ['rate_limit', 'auth', 'billing', 'overloaded', 'timeout', 'context_overflow', 'bad_request', 'network', 'unknown'];

void test('defaults: the documented numbers', () => {
  assert.equal(cooldownMs('rate_limit', 1, undefined, policy), 60_000);
  assert.equal(cooldownMs('rate_limit', 2, undefined, policy), 120_000);
  assert.equal(cooldownMs('rate_limit', 1, 7000, policy), 7000, 'Retry-After wins');
  assert.equal(cooldownMs('rate_limit', 9, 7000, policy), 7000, 'Retry-After is not doubled');
  assert.equal(cooldownMs('rate_limit', 1, 0, policy), RETRY_AFTER_FLOOR_MS);
  assert.equal(cooldownMs('rate_limit', 1, 10 * RETRY_AFTER_CAP_MS, policy), RETRY_AFTER_CAP_MS);
  assert.equal(cooldownMs('auth', 1, undefined, policy), 86_400_000);
  assert.equal(cooldownMs('billing', 5, undefined, policy), 86_400_000);
  assert.equal(cooldownMs('overloaded', 1, undefined, policy), 30_000);
  assert.equal(cooldownMs('timeout', 3, undefined, policy), 120_000);
  assert.equal(cooldownMs('network', 20, undefined, policy), 3_600_000, 'capped at max_ms');
  assert.equal(cooldownMs('bad_request', 1, 5000, policy), 0);
  assert.equal(cooldownMs('context_overflow', 3, undefined, policy), 0);
});

const policies = fc.record({
  rate_limit_ms: fc.nat({ max: 1e7 }),
  overloaded_ms: fc.nat({ max: 1e7 }),
  timeout_ms: fc.nat({ max: 1e7 }),
  network_ms: fc.nat({ max: 1e7 }),
  unknown_ms: fc.nat({ max: 1e7 }),
  auth_ms: fc.nat({ max: 1e9 }),
  billing_ms: fc.nat({ max: 1e9 }),
  max_ms: fc.nat({ max: 1e8 }),
});

void test('property: finite, non-negative, never longer than the larger of the cap and the base', () => {
  fc.assert(
    fc.property(policies, fc.constantFrom(...CLASSES), fc.integer({ min: 0, max: 1000 }), fc.option(fc.nat({ max: 1e10 }), { nil: undefined }), (p, c, strikes, retry) => {
      const ms = cooldownMs(c, strikes, retry, p);
      assert.ok(Number.isFinite(ms) && ms >= 0);
      assert.ok(ms <= Math.max(p.max_ms, p.rate_limit_ms, p.overloaded_ms, p.timeout_ms, p.network_ms, p.unknown_ms, p.auth_ms, p.billing_ms, RETRY_AFTER_CAP_MS));
    }),
    { numRuns: 2000 },
  );
});

void test('property: backoff never shrinks with more strikes and stops at the cap', () => {
  fc.assert(
    fc.property(fc.nat({ max: 1e7 }), fc.nat({ max: 1e8 }), fc.integer({ min: 0, max: 200 }), (base, max, strikes) => {
      const a = backoff(base, strikes, max);
      const b = backoff(base, strikes + 1, max);
      assert.ok(b >= a);
      assert.ok(a <= Math.max(base, max));
      if (strikes <= 1) assert.equal(a, Math.min(base, Math.max(base, max)));
    }),
  );
});

void test('property: an honoured Retry-After lies within [floor, cap] and equals the header inside it', () => {
  fc.assert(
    fc.property(policies, fc.nat({ max: 2 * RETRY_AFTER_CAP_MS }), fc.integer({ min: 1, max: 50 }), (p, retry, strikes) => {
      const ms = cooldownMs('rate_limit', strikes, retry, p);
      assert.ok(ms >= RETRY_AFTER_FLOOR_MS && ms <= RETRY_AFTER_CAP_MS);
      if (retry >= RETRY_AFTER_FLOOR_MS && retry <= RETRY_AFTER_CAP_MS) assert.equal(ms, retry);
    }),
  );
});
