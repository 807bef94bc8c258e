import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { claimRefusal, stateOf } from '../../../daemon/pairing/token-state';

void test('state and claim refusals: expired on read; final states refuse; an unverified PIN refuses', () => {
  const row = { state: 'unclaimed' as const, expires_at: 100, pin_hash: null, pin_verified: 0 };
  assert.equal(stateOf(row, 99.9), 'unclaimed');
  assert.equal(stateOf(row, 100), 'expired');
  assert.equal(claimRefusal(row, 50), null);
  assert.deepEqual(claimRefusal({ ...row, pin_hash: 'h' }, 50), { reason: 'pin_unverified' });
  assert.equal(claimRefusal({ ...row, pin_hash: 'h', pin_verified: 1 }, 50), null);
  assert.deepEqual(claimRefusal({ ...row, state: 'claimed' }, 50), { reason: 'not_unclaimed', state: 'claimed' });
  fc.assert(
    fc.property(fc.constantFrom('unclaimed', 'claimed', 'revoked' as const), fc.double({ min: 0, max: 200, noNaN: true }), fc.boolean(), fc.boolean(), (state, now, pin, verified) => {
      const r = { state, expires_at: 100, pin_hash: pin ? 'h' : null, pin_verified: verified ? 1 : 0 };
      const ok = claimRefusal(r, now) === null;
      assert.equal(ok, state === 'unclaimed' && now < 100 && (!pin || verified));
    }),
  );
});
