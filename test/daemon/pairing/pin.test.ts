import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { hashPin, newPin, pinMatches, PIN_RE } from '../../../daemon/pairing/pin';

void test('PINs: 6 CSPRNG digits; salted HMAC; only the same PIN matches', () => {
  for (let i = 0; i < 50; i++) assert.match(newPin(), /^\d{6}$/);
  const a = hashPin('4821');
  const b = hashPin('4821');
  assert.notEqual(a.hash, b.hash, 'salted');
  assert.ok(pinMatches('4821', a.salt, a.hash));
  assert.ok(!pinMatches('4822', a.salt, a.hash));
  assert.ok(!pinMatches('4821', a.salt, 'abcd'), 'a damaged hash never matches');
  fc.assert(fc.property(fc.stringMatching(/^[0-9]{4,8}$/), fc.stringMatching(/^[0-9]{4,8}$/), (x, y) => assert.equal(pinMatches(y, a.salt, hashPin(x, a.salt).hash), x === y)));
  assert.ok(PIN_RE.test('0000') && !PIN_RE.test('123') && !PIN_RE.test('123456789'));
});
