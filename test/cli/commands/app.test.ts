// svc app sign: a manifest signed with the publisher key of the CLI's home (made on first use, and the
// same key the next time), the envelope verifies under the given key id; --key-id missing or invalid
// is exit 2 before any key is made; a bad manifest or a damaged key file is exit 1 with the reason.
// svc app verify (spec 4.14): OK and exit 0 for a signed skill folder, else exit 1 and the reason —
// manifest_mismatch, file_mismatch, key_mismatch, signature_mismatch, malformed, unreadable, and
// unknown_key against the keys a loopback stand-in for the brain pins; a bad --public-key is exit 2,
// and with no brain reachable and no --public-key it says where the keys come from and exits 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeBrain, io } from '../../helpers/cli-rig';
import { appSign, appVerify } from '../../../cli/commands/app';
import type { Connection } from '../../../cli/connection';
import { loadOrCreatePublisherKey, PUBLISHER_KEY_FILE, readPublisherKey } from '../../../signing/publisher-key';
import { SIGNED_MANIFEST_FILE, verifySignedManifestText } from '../../../signing/signed-manifest';
import { signSkillDir } from '../../../signing/skill-signature';

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

// ── verify ───────────────────────────────────────────────────────────────────────────────────────

/** A skill folder signed under key id acme by a fresh publisher key. */
function signedSkill(t: { after(fn: () => void): void }): { dir: string; envelope: string; publicKey: string } {
  const root = mkdtempSync(join(tmpdir(), 'svc-app-verify-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'greeter');
  mkdirSync(dir);
  const manifest = { id: 'greeter', name: 'Greeter', version: '1.0.0', description: 'Says hello.', entry: 'main.js', params: { type: 'object' }, permissions: { network: { allow: [] }, tools: [] }, triggers: [{ type: 'manual' }] };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  writeFileSync(join(dir, 'main.js'), 'function main() { return "hello"; }\n');
  const key = loadOrCreatePublisherKey(join(root, 'home'));
  signSkillDir(dir, { keyId: 'acme', privateKey: key.privateKey });
  return { dir, envelope: join(dir, SIGNED_MANIFEST_FILE), publicKey: key.publicKey };
}

/** A loopback address nothing listens on (a port that was free a moment ago). */
async function noBrain(): Promise<Connection> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((ok) => server.close(() => ok()));
  return { url: `http://127.0.0.1:${port}`, token: 't', home: '/nonexistent' };
}

async function verify(conn: Connection, path: string, publicKey: string | undefined, json = false): Promise<{ code: number; out: string; err: string }> {
  const r = io();
  const code = await appVerify(conn, r.io, { path, publicKey, json });
  return { code, ...r.text };
}

void test('app verify --public-key: OK and exit 0 for a signed skill; --json says who signed it when', async (t) => {
  const { envelope, publicKey } = signedSkill(t);
  const conn = await noBrain();
  const ok = await verify(conn, envelope, publicKey);
  assert.equal(ok.code, 0, ok.out + ok.err);
  assert.match(ok.out, /^OK\nsigned by acme at \d{4}-\d\d-\d\dT[\d:.]+Z\n$/);
  const asJson = await verify(conn, envelope, publicKey, true);
  assert.equal(asJson.code, 0);
  const parsed = JSON.parse(asJson.out) as { ok: boolean; key_id: string; signed_at: string };
  assert.deepEqual([parsed.ok, parsed.key_id], [true, 'acme']);
});

void test('app verify: each way a signed skill can be wrong is exit 1 with its reason', async (t) => {
  const conn = await noBrain();
  const reasonOf = async (path: string, key: string | undefined): Promise<string> => {
    const r = await verify(conn, path, key, true);
    assert.equal(r.code, 1, r.out);
    return (JSON.parse(r.out) as { reason: string }).reason;
  };

  const beside = signedSkill(t);
  const manifestPath = join(beside.dir, 'manifest.json');
  writeFileSync(manifestPath, readFileSync(manifestPath, 'utf8').replace('Says hello.', 'Says goodbye.'));
  assert.equal(await reasonOf(beside.envelope, beside.publicKey), 'manifest_mismatch');
  writeFileSync(manifestPath, '{"id":');
  assert.equal(await reasonOf(beside.envelope, beside.publicKey), 'manifest_mismatch', 'a manifest.json beside that is not JSON');

  const code = signedSkill(t);
  writeFileSync(join(code.dir, 'main.js'), 'function main() { return "pwned"; }\n');
  const changed = await verify(conn, code.envelope, code.publicKey);
  assert.equal(changed.out, 'file_mismatch\nmain.js is not the file that was signed\n');
  rmSync(join(code.dir, 'main.js'));
  assert.equal(await reasonOf(code.envelope, code.publicKey), 'file_mismatch', 'a listed file gone');

  const other = signedSkill(t);
  const stranger = signedSkill(t);
  assert.equal(await reasonOf(other.envelope, stranger.publicKey), 'key_mismatch');

  const forged = signedSkill(t);
  const envelope = JSON.parse(readFileSync(forged.envelope, 'utf8')) as { signature: string };
  const at = 10; // well before the last characters, whose spare bits would make the spelling non-canonical
  envelope.signature = `${envelope.signature.slice(0, at)}${envelope.signature[at] === 'A' ? 'B' : 'A'}${envelope.signature.slice(at + 1)}`;
  writeFileSync(forged.envelope, JSON.stringify(envelope));
  assert.equal(await reasonOf(forged.envelope, forged.publicKey), 'signature_mismatch');

  const garbage = signedSkill(t);
  writeFileSync(garbage.envelope, 'this is not an envelope');
  assert.equal(await reasonOf(garbage.envelope, garbage.publicKey), 'malformed');

  const missing = await verify(conn, join(garbage.dir, 'nowhere.signed.json'), garbage.publicKey);
  assert.equal(missing.code, 1);
  assert.match(missing.out, /^unreadable\ncannot read .*nowhere\.signed\.json \(ENOENT\)\n$/);
});

void test('app verify: a skill signed as an app (svc app sign: no digest of its entry) is file_mismatch, as the brain refuses it', async (t) => {
  const app = scratch(t);
  const home = app.home;
  const { dir } = signedSkill(t);
  const manifestPath = join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
  delete manifest.files;
  writeFileSync(manifestPath, JSON.stringify(manifest));
  assert.equal(appSign(io().io, { manifestPath, keyId: 'acme', home, json: false }), 0);
  const r = await verify(await noBrain(), join(dir, SIGNED_MANIFEST_FILE), readPublisherKey(home)!.publicKey);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /^file_mismatch\nthe manifest names the entry main\.js but lists no digest of it in files, .*svc skills sign/);
  assert.equal(appSign(io().io, { manifestPath: app.manifest, keyId: 'acme', home, json: false }), 0);
  assert.equal((await verify(await noBrain(), join(app.manifest, '..', SIGNED_MANIFEST_FILE), readPublisherKey(home)!.publicKey)).code, 0, 'an app manifest names no entry');
});

void test('app verify: a --public-key that is not a 32-byte base64 key is exit 2 before the file is read', async () => {
  const conn = await noBrain();
  for (const key of ['', 'short', 'ZJ6nrbLPBzcUsp6MXzcnM4OsK2m/8y7B0t3TkJCY0d8', 'ZJ6nrbLPBzcUsp6MXzcnM4OsK2m/8y7B0t3TkJCY0d8==']) {
    const r = await verify(conn, '/nowhere/manifest.signed.json', key);
    assert.equal(r.code, 2, key);
    assert.match(r.err, /--public-key is a 32-byte Ed25519 public key in base64/);
    assert.equal(r.out, '');
  }
});

void test('app verify against the brain\'s pinned keys: OK when acme is pinned, unknown_key when not; no brain is exit 1 with the way out', async (t) => {
  const { envelope, publicKey } = signedSkill(t);
  const pinned: [number, unknown][] = [
    [200, { keys: [{ key_id: 'acme', public_key: publicKey }] }],
    [200, { keys: [] }],
    [401, { error: { code: 'UNAUTHORIZED', message: 'missing or invalid token', details: null } }],
  ];
  const { conn, seen } = await fakeBrain(t, () => pinned.shift()!);
  assert.equal((await verify(conn, envelope, undefined)).code, 0);
  const unknown = await verify(conn, envelope, undefined);
  assert.equal(unknown.code, 1);
  assert.match(unknown.out, /^unknown_key\n/);
  const refused = await verify(conn, envelope, undefined);
  assert.equal(refused.code, 1);
  assert.match(refused.err, /^svc: missing or invalid token/);
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), Array<string>(3).fill('GET /api/publishers/keys'));
  const away = await noBrain();
  const none = await verify(away, envelope, undefined);
  assert.equal(none.code, 1);
  assert.equal(none.out, '');
  assert.equal(none.err, `svc app verify: the keys to trust come from the brain, and there is none at ${away.url}; start it, or pass --public-key <base64>\n`);
});
