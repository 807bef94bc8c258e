import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isDeviceKey, isPairToken, newDeviceKey, newPairToken, secretHash, SECRET_MAX_LENGTH } from '../../mesh/pair-token';

void test('tokens and keys: 32 random bytes behind their prefix, never confused with each other, hashed with sha256', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 100; i++) {
    const t = newPairToken();
    const k = newDeviceKey();
    assert.ok(isPairToken(t) && !isDeviceKey(t));
    assert.ok(isDeviceKey(k) && !isPairToken(k));
    assert.ok(t.length <= SECRET_MAX_LENGTH && k.length <= SECRET_MAX_LENGTH);
    seen.add(t);
  }
  assert.equal(seen.size, 100);
  assert.match(secretHash('x'), /^[0-9a-f]{64}$/);
});

void test('property: arbitrary strings are tokens only in the exact format', () => {
  fc.assert(fc.property(fc.string({ maxLength: 80 }), (s) => assert.equal(isPairToken(s), /^svcpt_[A-Za-z0-9_-]{43}$/.test(s))));
  fc.assert(fc.property(fc.string({ maxLength: 3 }), (s) => assert.equal(isPairToken(`${newPairToken()}${s}`), s === '')));
});
