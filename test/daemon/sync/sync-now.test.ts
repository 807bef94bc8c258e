// daemon/sync/sync-now.ts: when two cursors name the same ops (sameCursor, kept in peer-cursors.ts), the
// test sync now makes of a peer. The wait itself runs on real links in sync-links.test.ts ("sync now
// says synced").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sameCursor } from '../../../daemon/sync/peer-cursors';

const origin = fc.constantFrom('3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f', '7a8b9c0d-1e2f-4a3b-9c4d-5e6f7a8b9c0d', '0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e');
const cursor = fc.dictionary(origin, fc.nat({ max: 50 }));

test('sameCursor: an absent origin is 0; equal counts everywhere, and only then', () => {
  assert.equal(sameCursor({}, {}), true);
  assert.equal(sameCursor({ a: 0 }, {}), true);
  assert.equal(sameCursor({ a: 3 }, { a: 3, b: 0 }), true);
  assert.equal(sameCursor({ a: 3 }, { a: 4 }), false);
  assert.equal(sameCursor({ a: 3 }, {}), false);
  fc.assert(
    fc.property(cursor, cursor, (x, y) => {
      const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
      const expected = [...keys].every((k) => (x[k] ?? 0) === (y[k] ?? 0));
      assert.equal(sameCursor(x, y), expected);
      assert.equal(sameCursor(y, x), expected);
      assert.equal(sameCursor(x, x), true);
    }),
  );
});
