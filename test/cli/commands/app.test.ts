// svc app sign: a manifest signed with the publisher key of the CLI's home (made on first use, and the
// same key the next time), the envelope verifies under the given key id; --key-id missing or invalid
// is exit 2 before any key is made; a bad manifest or a damaged key file is exit 1 with the reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { io } from '../../helpers/cli-rig';
import { appSign } from '../../../cli/commands/app';
import { PUBLISHER_KEY_FILE, readPublisherKey } from '../../../signing/publisher-key';
import { SIGNED_MANIFEST_FILE, verifySignedManifestText } from '../../../signing/signed-manifest';

const scratch = (t: { after(fn: () => void): void }): { home: string; manifest: string } => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-app-sign-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const manifest = join(dir, 'manifest.json');
  writeFileSync(manifest, JSON.stringify({ name: 'Timer', version: '1.0.0' }));
  return { home: join(dir, 'home'), manifest };
};

void test('signs with the home\'s publisher key, made on first use and reused, under the given key id', (t) => {
  const { home, manifest } = scratch(t);
  const first = io();
  assert.equal(appSign(first.io, { manifestPath: manifest, keyId: 'acme-release', home, json: false }), 0, first.text.err);
  const key = readPublisherKey(home)!;
  assert.match(first.text.out, /^signed: .*manifest\.signed\.json$/m);
  assert.ok(first.text.out.includes(`public key: ${key.publicKey}`));
  assert.ok(first.text.out.includes(`this key's own id is ${key.keyId}`));
  const envelope = readFileSync(join(manifest, '..', SIGNED_MANIFEST_FILE), 'utf8');
  assert.equal(verifySignedManifestText(envelope, (id) => (id === 'acme-release' ? key.publicKey : undefined)).ok, true);
  const again = io();
  assert.equal(appSign(again.io, { manifestPath: manifest, keyId: key.keyId, home, json: true }), 0);
  assert.deepEqual(JSON.parse(again.text.out), { path: join(manifest, '..', SIGNED_MANIFEST_FILE), key_id: key.keyId, public_key: key.publicKey });
  assert.equal(readPublisherKey(home)!.publicKey, key.publicKey, 'the same key the second time');
});

void test('--key-id missing or not a key id is exit 2, and no key is made', (t) => {
  const { home, manifest } = scratch(t);
  for (const keyId of [undefined, '', 'has space', 'a/b']) {
    const run = io();
    assert.equal(appSign(run.io, { manifestPath: manifest, keyId, home, json: false }), 2, String(keyId));
    assert.match(run.text.err, /--key-id is required/);
  }
  assert.equal(existsSync(join(home, PUBLISHER_KEY_FILE)), false);
});

void test('a manifest that is not JSON, and a damaged publisher key, are exit 1 with the reason', (t) => {
  const { home, manifest } = scratch(t);
  writeFileSync(manifest, '{"name":');
  const bad = io();
  assert.equal(appSign(bad.io, { manifestPath: manifest, keyId: 'k', home, json: false }), 1);
  assert.match(bad.text.err, /is not JSON/);
  writeFileSync(manifest, '{}');
  writeFileSync(join(home, PUBLISHER_KEY_FILE), 'garbage');
  const damaged = io();
  assert.equal(appSign(damaged.io, { manifestPath: manifest, keyId: 'k', home, json: false }), 1);
  assert.match(damaged.text.err, /does not hold a publisher key/);
  assert.equal(existsSync(join(manifest, '..', SIGNED_MANIFEST_FILE)), false);
});
