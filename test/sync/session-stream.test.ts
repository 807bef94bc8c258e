// The pieces of the stream: batches split by bytes keep every op in order within the frame bound (an
// op too big for any frame is named), and merging cursors keeps the larger count of each origin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mergeCursors, splitByBytes } from '../../sync/session-stream';

void test('property: a split keeps every op in order, and each batch within the bound unless one op alone is over it', () => {
  fc.assert(
    fc.property(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 40 }), fc.integer({ min: 80, max: 2000 }), (ops, maxBytes) => {
      const split = splitByBytes(ops, maxBytes, 64, 1_000_000);
      assert.ok('batches' in split);
      assert.deepEqual(split.batches.flat(), ops);
      for (const batch of split.batches) {
        assert.ok(batch.length > 0);
        const bytes = 64 + batch.reduce<number>((sum, op) => sum + Buffer.byteLength(JSON.stringify(op)) + 1, 0);
        assert.ok(bytes <= maxBytes || batch.length === 1, `${bytes} > ${maxBytes}`);
      }
    }),
  );
});

void test('an op over the frame bound is named', () => {
  assert.deepEqual(splitByBytes([1, 'x'.repeat(200), 2], 100, 64, 150), { tooLarge: 1 });
});

void test('property: merged cursors hold the larger count of every origin', () => {
  const cursor = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fc.nat(100));
  fc.assert(
    fc.property(cursor, cursor, (x, y) => {
      const m = mergeCursors(x, y);
      assert.deepEqual(mergeCursors(y, x), m);
      for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) assert.equal(m[k], Math.max(x[k] ?? 0, y[k] ?? 0));
    }),
  );
});
