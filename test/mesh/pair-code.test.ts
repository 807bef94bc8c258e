import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { displayPairCode, newPairCode, parsePairCode } from '../../mesh/pair-code';

void test('new codes are six digits, leading zeros kept, and parse back from how a node shows them', () => {
  for (let i = 0; i < 200; i++) {
    const code = newPairCode();
    assert.match(code, /^\d{6}$/);
    assert.equal(parsePairCode(displayPairCode(code)), code);
  }
  assert.equal(parsePairCode('007 042'), '007042');
  assert.equal(parsePairCode(' 123-456 '), '123456');
});

void test('property: only six digits (one space or dash in the middle allowed) parse, to the digits', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 12 }), (s) => {
      const parsed = parsePairCode(s);
      if (parsed === undefined) return;
      assert.match(parsed, /^\d{6}$/);
      assert.equal(s.trim().replace(/[ -]/, ''), parsed);
    }),
  );
  fc.assert(fc.property(fc.integer({ min: 0, max: 999_999 }), (n) => assert.equal(parsePairCode(String(n).padStart(6, '0')), String(n).padStart(6, '0'))));
  for (const bad of ['12345', '1234567', '12 34 56', '١٢٣٤٥٦', '123  456', 'abcdef']) assert.equal(parsePairCode(bad), undefined, bad);
});
