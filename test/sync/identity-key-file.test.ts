// The sync key file: made once (0600) and read back unchanged, so peers that pinned the key keep
// recognising the brain; a damaged file is an error that names the fix, never a silent new key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSyncIdentity, SYNC_KEY_FILE } from '../../sync/identity-key-file';
import { generateKeypair, signText, SyncKeyError, verifyText } from '../../sync/identity-keys';

const BRAIN = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const home = (t: { after(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sync-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

void test('the keypair is made once, 0600, and the same on every later load', (t) => {
  const dir = home(t);
  const first = loadSyncIdentity(dir, BRAIN);
  assert.equal(statSync(join(dir, SYNC_KEY_FILE)).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(dir), [SYNC_KEY_FILE], 'no temp file left behind');
  const again = loadSyncIdentity(dir, BRAIN);
  assert.equal(again.publicKey, first.publicKey);
  assert.ok(verifyText(first.publicKey, 'x', signText(again, 'x')), 'the private key is the same too');
  assert.equal(again.brainId, BRAIN);
});

void test('a damaged key file, a public key that is not the private key\'s, or another brain\'s key is an error naming the fix, and is left as it was', (t) => {
  const dir = home(t);
  const file = join(dir, SYNC_KEY_FILE);
  const pair = generateKeypair();
  for (const text of [
    '',
    'not json',
    '[]',
    '{"v":2}',
    JSON.stringify({ v: 1, public_key: pair.publicKey, private_key: pair.privateKey }),
    JSON.stringify({ v: 1, brain_id: BRAIN, public_key: generateKeypair().publicKey, private_key: pair.privateKey }),
    JSON.stringify({ v: 1, brain_id: '0b1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b', public_key: pair.publicKey, private_key: pair.privateKey }),
  ]) {
    writeFileSync(file, text, { mode: 0o600 });
    assert.throws(() => loadSyncIdentity(dir, BRAIN), SyncKeyError, text);
    assert.equal(readFileSync(file, 'utf8'), text);
  }
  writeFileSync(file, 'not json');
  assert.throws(() => loadSyncIdentity(dir, BRAIN), /pair every peer again/);
});
