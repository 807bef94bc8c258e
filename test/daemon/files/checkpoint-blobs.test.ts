// Checkpoint blobs: named by the sha256 of their content, written once, checked on read, collected
// when unreferenced; and the fingerprint drift checks compare.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { BLOB_CAP_BYTES, BlobStore, fingerprint, sha256 } from '../../../daemon/files/checkpoint-blobs';

function store(t: { after(fn: () => unknown): void }): BlobStore {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-blobs-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return new BlobStore(join(dir, 'blobs'));
}

void test('property: any content comes back byte for byte under its sha256, stored once', (t) => {
  const blobs = store(t);
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 2048 }), (content) => {
      const hash = blobs.put(content);
      assert.equal(hash, sha256(content));
      assert.equal(blobs.put(content), hash);
      assert.deepEqual(new Uint8Array(blobs.get(hash)), content);
    }),
  );
  assert.ok(readdirSync(blobs.dir).every((name) => /^[0-9a-f]{64}$/.test(name)), 'no temp file left');
});

void test('a damaged blob or a name that is not a hash is refused, never restored', (t) => {
  const blobs = store(t);
  const hash = blobs.put(Buffer.from('prior'));
  writeFileSync(join(blobs.dir, hash), 'tampered');
  assert.throws(() => blobs.get(hash), /damaged/);
  assert.throws(() => blobs.get('../index.db'), /not a blob name/);
});

void test('gc keeps the referenced blobs and removes the rest (leftover temp files too)', (t) => {
  const blobs = store(t);
  const keep = blobs.put(Buffer.from('keep'));
  blobs.put(Buffer.from('drop'));
  writeFileSync(join(blobs.dir, '.x.123.tmp'), 'left by a crash');
  assert.equal(blobs.gc(new Set([keep])), 2);
  assert.deepEqual(readdirSync(blobs.dir), [keep]);
  assert.equal(statSync(join(blobs.dir, keep)).mode & 0o777, 0o600);
});

void test('fingerprint: sha256 of the content up to the cap, the inode and size past it', (t) => {
  const blobs = store(t);
  blobs.put(Buffer.from('x'));
  const small = join(blobs.dir, 'small');
  writeFileSync(small, 'abc');
  assert.equal(fingerprint(small, statSync(small)), sha256('abc'));
  const big = join(blobs.dir, 'big');
  writeFileSync(big, Buffer.alloc(BLOB_CAP_BYTES + 1));
  const st = statSync(big);
  assert.equal(fingerprint(big, st), `stat:${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`);
});
