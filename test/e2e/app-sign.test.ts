// `svc app sign` black-box, on the built CLI: the envelope it writes is checked by an independent
// verifier (node:crypto Ed25519 over `canonicalize` of the manifest, nothing of signing/), the publisher
// key is made once in the home (0600) and reused, a respelled manifest.json signs alike, and a missing
// --key-id is exit 2 with no key made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { runSvc } from './fixtures/processes';

const scratch = (t: { after(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-e2e-app-sign-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** What any implementation of spec 2.1 checks: Ed25519 over the RFC 8785 form of `manifest`. */
function independentlyValid(envelope: { manifest: unknown; signature: string; public_key: string }): boolean {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(envelope.public_key, 'base64').toString('base64url') }, format: 'jwk' });
  return verify(null, Buffer.from(canonicalize(envelope.manifest)!, 'utf8'), key, Buffer.from(envelope.signature, 'base64'));
}

test('svc app sign writes manifest.signed.json that an independent verifier accepts; the key is made once and reused', async (t) => {
  const dir = scratch(t);
  const home = join(dir, 'home');
  const manifest = join(dir, 'manifest.json');
  writeFileSync(manifest, JSON.stringify({ version: '1.0.0', name: 'Timer', permissions: { network: ['api.example.org'] } }));
  const first = await runSvc(['--home', home, 'app', 'sign', manifest, '--key-id', 'acme', '--json']);
  assert.equal(first.code, 0, first.stderr);
  const printed = JSON.parse(first.stdout) as { path: string; key_id: string; public_key: string };
  assert.equal(printed.path, join(dir, 'manifest.signed.json'));
  assert.equal(statSync(join(home, 'publisher.key')).mode & 0o777, 0o600);
  const envelope = JSON.parse(readFileSync(printed.path, 'utf8')) as { manifest: unknown; signature: string; public_key: string; key_id: string; alg: string; signed_at: string };
  assert.deepEqual([envelope.key_id, envelope.alg, envelope.public_key], ['acme', 'ed25519', printed.public_key]);
  assert.match(envelope.signed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(independentlyValid(envelope));
  assert.equal(independentlyValid({ ...envelope, manifest: { ...(envelope.manifest as object), version: '1.0.1' } }), false, 'the check can fail');

  // The same key again (through $SVC_HOME this time), and a respelled manifest signs the same bytes.
  writeFileSync(manifest, '{\n  "permissions": { "network": [ "api.example.org" ] },\n  "name": "Timer",\n  "version": "1.0.0"\n}\n');
  const again = await runSvc(['app', 'sign', manifest, '--key-id', 'acme', '--json'], { SVC_HOME: home });
  assert.equal(again.code, 0, again.stderr);
  const second = JSON.parse(readFileSync(printed.path, 'utf8')) as typeof envelope;
  assert.equal(second.public_key, envelope.public_key);
  assert.equal(second.signature, envelope.signature, 'Ed25519 is deterministic: one canonical form, one signature');
});

test('svc app sign without --key-id is exit 2 and makes no key', async (t) => {
  const dir = scratch(t);
  writeFileSync(join(dir, 'manifest.json'), '{}');
  const r = await runSvc(['--home', join(dir, 'home'), 'app', 'sign', join(dir, 'manifest.json')]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--key-id is required/);
  assert.equal(existsSync(join(dir, 'home', 'publisher.key')), false);
  assert.equal(existsSync(join(dir, 'manifest.signed.json')), false);
});
