import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { nodeKeyFileName, safeNodeId } from '../../mesh/pair-key-file';

void test('node-protocol.md key file names: safe ids as is, others replaced and suffixed with sha256', () => {
  assert.equal(nodeKeyFileName('esp32-kitchen'), 'esp32-kitchen.key');
  assert.match(safeNodeId('a/b'), /^a_b-[0-9a-f]{8}$/);
  assert.notEqual(safeNodeId('a/b'), safeNodeId('a?b'), 'ids that sanitise alike differ by their hash');
  assert.match(safeNodeId('x'.repeat(129)), /^x{128}-[0-9a-f]{8}$/);
  assert.match(safeNodeId(''), /^-[0-9a-f]{8}$/);
});

void test('property: a key file name never holds a path separator and is at most 137 characters plus .key', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (id) => {
      const safe = safeNodeId(id);
      assert.match(safe, /^[A-Za-z0-9._:-]+$|^-[0-9a-f]{8}$/);
      assert.ok(safe.length <= 137);
      assert.ok(!safe.includes('/'));
    }),
  );
});
