// manifest.signed.json on disk: written beside the manifest (0644, no temp file left), verifiable, the
// manifest file untouched; an unreadable, non-JSON or non-object manifest, or an envelope given as the
// manifest, is a ManifestFileError and writes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyIdOf, rawPublicKey } from '../../signing/ed25519';
import { ManifestFileError, signManifestFile } from '../../signing/signed-manifest-file';
import { SIGNED_MANIFEST_FILE, verifySignedManifestText } from '../../signing/signed-manifest';
import { CanonicalJsonError } from '../../signing/canonical-json';

const bundle = (t: { after(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-app-bundle-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};
const { privateKey } = generateKeyPairSync('ed25519');
const PUBLIC = rawPublicKey(privateKey);
const KEY = { keyId: keyIdOf(PUBLIC), privateKey };

void test('the envelope is written beside the manifest, public, and verifies; the manifest is untouched', (t) => {
  const dir = bundle(t);
  const manifestText = '{ "version": "1.0.0",\n  "name": "Timer" }\n';
  writeFileSync(join(dir, 'manifest.json'), manifestText);
  const written = signManifestFile(join(dir, 'manifest.json'), KEY, new Date(0));
  assert.equal(written, join(dir, SIGNED_MANIFEST_FILE));
  assert.equal(statSync(written).mode & 0o777, 0o644);
  assert.deepEqual(readdirSync(dir).sort(), ['manifest.json', SIGNED_MANIFEST_FILE]);
  assert.equal(readFileSync(join(dir, 'manifest.json'), 'utf8'), manifestText);
  const verdict = verifySignedManifestText(readFileSync(written, 'utf8'), (id) => (id === KEY.keyId ? PUBLIC : undefined));
  assert.deepEqual(verdict, { ok: true, manifest: { name: 'Timer', version: '1.0.0' }, keyId: KEY.keyId, signedAt: '1970-01-01T00:00:00.000Z' });
  // Signing again replaces the envelope.
  signManifestFile(join(dir, 'manifest.json'), KEY, new Date(1000));
  assert.match(readFileSync(written, 'utf8'), /1970-01-01T00:00:01.000Z/);
  assert.deepEqual(readdirSync(dir).sort(), ['manifest.json', SIGNED_MANIFEST_FILE]);
});

void test('what cannot be signed is refused and nothing is written', (t) => {
  const dir = bundle(t);
  const cases: [string, string | undefined, new (...a: never[]) => Error][] = [
    ['missing.json', undefined, ManifestFileError],
    ['broken.json', '{"name":', ManifestFileError],
    ['list.json', '[1,2]', ManifestFileError],
    ['null.json', 'null', ManifestFileError],
    ['lone.json', '{"name":"\\ud800"}', CanonicalJsonError],
    [SIGNED_MANIFEST_FILE, '{}', ManifestFileError],
  ];
  for (const [name, text, error] of cases) {
    if (text !== undefined) writeFileSync(join(dir, name), text);
    assert.throws(() => signManifestFile(join(dir, name), KEY), error, name);
    if (name !== SIGNED_MANIFEST_FILE) assert.ok(!readdirSync(dir).includes(SIGNED_MANIFEST_FILE), name);
    rmSync(join(dir, name), { force: true });
  }
  assert.throws(() => signManifestFile(dir, KEY), ManifestFileError, 'a directory');
});
