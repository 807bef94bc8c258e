// signing/skill-signature.ts: signSkillDir adds the SHA-256 of the entry and of every listed file to
// manifest.json, then writes manifest.signed.json over it (both 0644); the envelope verifies against the
// key and signs exactly the rewritten manifest; signing again is stable. A missing entry or listed file,
// a link, an entry or listed name that is not a plain file name, or a listed manifest is a
// ManifestFileError and writes no envelope.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyIdOf, rawPublicKey } from '../../signing/ed25519';
import { signSkillDir } from '../../signing/skill-signature';
import { ManifestFileError } from '../../signing/signed-manifest-file';
import { SIGNED_MANIFEST_FILE, verifySignedManifestText } from '../../signing/signed-manifest';

const { privateKey } = generateKeyPairSync('ed25519');
const PUBLIC = rawPublicKey(privateKey);
const KEY = { keyId: keyIdOf(PUBLIC), privateKey };
const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

function skillDir(t: { after(fn: () => void): void }, manifest: Record<string, unknown>, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-skill-sign-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const base = { id: 'unit-convert', version: '1.0.0', entry: 'main.js' };

void test('the manifest gets the digests of its entry and listed files, and the envelope signs exactly it', (t) => {
  const dir = skillDir(t, { ...base, files: { 'data.json': '0'.repeat(64) } }, { 'main.js': 'main()', 'data.json': '{}' });
  const signed = signSkillDir(dir, KEY, new Date(0));
  assert.deepEqual(signed.files, { 'data.json': sha('{}'), 'main.js': sha('main()') });
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(manifest, { ...base, files: signed.files });
  const verdict = verifySignedManifestText(readFileSync(join(dir, SIGNED_MANIFEST_FILE), 'utf8'), (id) => (id === KEY.keyId ? PUBLIC : undefined));
  assert.ok(verdict.ok, JSON.stringify(verdict));
  assert.deepEqual(verdict.manifest, manifest);
  assert.equal(verdict.signedAt, new Date(0).toISOString());
  for (const file of [signed.manifestPath, signed.envelopePath]) assert.equal(statSync(file).mode & 0o777, 0o644);
  const again = signSkillDir(dir, KEY, new Date(0));
  assert.deepEqual(again.files, signed.files);
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')), manifest);
});

void test('a changed entry changes its digest when signed again', (t) => {
  const dir = skillDir(t, base, { 'main.js': 'one' });
  const first = signSkillDir(dir, KEY);
  writeFileSync(join(dir, 'main.js'), 'two');
  assert.notEqual(signSkillDir(dir, KEY).files['main.js'], first.files['main.js']);
});

void test('broken folders are a ManifestFileError and no envelope is written', (t) => {
  const cases: [Record<string, unknown>, Record<string, string>, RegExp][] = [
    [base, {}, /main\.js is missing/],
    [{ ...base, entry: '../main.js' }, { 'main.js': '' }, /no entry file/],
    [{ ...base, entry: 7 }, {}, /no entry file/],
    [{ ...base, files: { 'lib/x.js': 'a' } }, { 'main.js': '' }, /plain file name/],
    [{ ...base, files: { 'manifest.json': 'a' } }, { 'main.js': '' }, /other than the manifests/],
    [{ ...base, files: ['main.js'] }, { 'main.js': '' }, /not an object/],
    [{ ...base, files: { 'data.json': 'a' } }, { 'main.js': '' }, /data\.json is missing/],
  ];
  for (const [manifest, files, message] of cases) {
    const dir = skillDir(t, manifest, files);
    assert.throws(() => signSkillDir(dir, KEY), (err: unknown) => err instanceof ManifestFileError && message.test(err.message), JSON.stringify(manifest));
    assert.equal(existsSync(join(dir, SIGNED_MANIFEST_FILE)), false);
  }
  const linked = skillDir(t, base, { 'real.js': '' });
  symlinkSync(join(linked, 'real.js'), join(linked, 'main.js'));
  assert.throws(() => signSkillDir(linked, KEY), (err: unknown) => err instanceof ManifestFileError && /not a regular file/.test(err.message));
});
