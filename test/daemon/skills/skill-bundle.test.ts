// daemon/skills/skill-bundle.ts: the files of a skill checked in memory before anything is written —
// a signed bundle passes with its key id and exactly its files; a manifest that is not the signed one
// (manifest_mismatch), code that is not the digested one (file_mismatch), a key id nobody pinned
// (unknown_key), a key id pinned to another key (key_mismatch), no envelope (unsigned unless allowed),
// a signed manifest without the entry's digest (file_mismatch); bad manifests are 400 with their
// problems (impl.py named in words; a cron expression that does not parse names its trigger).
// filesOfDir refuses links. A fast-check property: any single-byte change of main.js in a signed
// bundle is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { checkBundle, filesOfDir, MANIFEST_FILE, type Files } from '../../../daemon/skills/skill-bundle';
import { AppError, UnverifiedManifestError } from '../../../daemon/kernel/errors';
import { SIGNED_MANIFEST_FILE, signManifest } from '../../../signing/signed-manifest';
import { PYTHON_REFUSED } from '../../../skills/manifest';
import { manifestOf, newKey, writeSkill, type TestKey } from './skills-rig';

function workDir(t: { after(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-skill-bundle-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const pinnedOf = (...keys: TestKey[]) => (id: string): string | undefined => keys.find((k) => k.keyId === id)?.publicKey;
const text = (files: Files, name: string): string => Buffer.from(files.get(name)!).toString('utf8');
const withFile = (files: Files, name: string, bytes: Uint8Array | string): Map<string, Uint8Array> => new Map([...files, [name, typeof bytes === 'string' ? Buffer.from(bytes) : bytes]]);

const refusedFor = (reason: string) => (err: unknown): boolean => {
  assert.ok(err instanceof UnverifiedManifestError, String(err));
  assert.equal(err.reason, reason, err.message);
  return true;
};
const badRequest = (includes: string) => (err: unknown): boolean => {
  assert.ok(err instanceof AppError, String(err));
  assert.equal(err.status, 400);
  assert.ok(err.message.includes(includes), err.message);
  return true;
};

async function signedFiles(t: { after(fn: () => unknown): void }, key: TestKey): Promise<Map<string, Uint8Array>> {
  return filesOfDir(writeSkill(workDir(t), {}, key));
}

void test('a signed bundle passes with its key id and exactly the skill\'s files (strays left out)', async (t) => {
  const key = newKey();
  const dir = writeSkill(workDir(t), {}, key);
  writeFileSync(join(dir, 'notes.txt'), 'not part of the skill');
  const found = await filesOfDir(dir);
  assert.deepEqual([...found.keys()].sort(), [MANIFEST_FILE, 'main.js', SIGNED_MANIFEST_FILE].sort());
  const checked = checkBundle(withFile(found, 'stray.js', 'x'), pinnedOf(key), false);
  assert.equal(checked.signedBy, key.keyId);
  assert.equal(checked.manifest.id, 'greeter');
  assert.deepEqual([...checked.files.keys()].sort(), [MANIFEST_FILE, 'main.js', SIGNED_MANIFEST_FILE].sort());
});

void test('tampering: manifest → manifest_mismatch, main.js → file_mismatch, unknown key → unknown_key, key pinned to another key → key_mismatch', async (t) => {
  const key = newKey();
  const files = await signedFiles(t, key);
  const manifest = JSON.parse(text(files, MANIFEST_FILE)) as { permissions: { tools: string[] } };
  manifest.permissions.tools = ['reboot'];
  assert.throws(() => checkBundle(withFile(files, MANIFEST_FILE, JSON.stringify(manifest)), pinnedOf(key), false), refusedFor('manifest_mismatch'));
  assert.throws(() => checkBundle(withFile(files, 'main.js', 'function main() { return 1; }'), pinnedOf(key), false), refusedFor('file_mismatch'));
  assert.throws(() => checkBundle(files, pinnedOf(), false), refusedFor('unknown_key'));
  const impostor = newKey();
  assert.throws(() => checkBundle(files, (id) => (id === key.keyId ? impostor.publicKey : undefined), false), refusedFor('key_mismatch'));
  assert.throws(() => checkBundle(withFile(files, SIGNED_MANIFEST_FILE, '{not json'), pinnedOf(key), false), refusedFor('malformed'));
  // allow_unsigned does not weaken a signed bundle's check.
  assert.throws(() => checkBundle(files, pinnedOf(), true), refusedFor('unknown_key'));
});

void test('unsigned: refused with reason unsigned unless allowed; allowed, signedBy is null', async (t) => {
  const files = await filesOfDir(writeSkill(workDir(t)));
  assert.throws(() => checkBundle(files, pinnedOf(), false), refusedFor('unsigned'));
  assert.equal(checkBundle(files, pinnedOf(), true).signedBy, null);
});

void test('a signed manifest without the digest of its entry is refused (file_mismatch): the signature would not cover the code', async (t) => {
  const key = newKey();
  const dir = writeSkill(workDir(t));
  const manifest = manifestOf();
  writeFileSync(join(dir, SIGNED_MANIFEST_FILE), JSON.stringify(signManifest(manifest, key)));
  const found = await filesOfDir(dir);
  assert.throws(() => checkBundle(found, pinnedOf(key), false), refusedFor('file_mismatch'));
});

void test('bad manifests are 400 with their problems; impl.py names what svc runs; a listed file missing is named', async (t) => {
  const dir = writeSkill(workDir(t));
  const files = await filesOfDir(dir);
  assert.throws(() => checkBundle(new Map([['main.js', Buffer.from('')]]), pinnedOf(), true), badRequest('manifest.json: missing'));
  assert.throws(() => checkBundle(withFile(files, MANIFEST_FILE, '{'), pinnedOf(), true), badRequest('not JSON'));
  assert.throws(() => checkBundle(withFile(files, MANIFEST_FILE, JSON.stringify(manifestOf({ version: 'one' }))), pinnedOf(), true), badRequest('/version'));
  assert.throws(() => checkBundle(withFile(files, MANIFEST_FILE, JSON.stringify(manifestOf({ extra: { entry: 'impl.py' } }))), pinnedOf(), true), badRequest(PYTHON_REFUSED));
  for (const cron of ['every monday at noon', '99 * * * *', '60 * * * * *']) {
    assert.throws(() => checkBundle(withFile(files, MANIFEST_FILE, JSON.stringify(manifestOf({ triggers: [{ type: 'manual' }, { type: 'schedule', cron }] }))), pinnedOf(), true), badRequest('/triggers/1/cron'), cron);
  }
  assert.ok(checkBundle(withFile(files, MANIFEST_FILE, JSON.stringify(manifestOf({ triggers: [{ type: 'schedule', cron: '0 7 * * MON-FRI' }] }))), pinnedOf(), true));
  const listed = manifestOf({ extra: { files: { 'data.json': 'a'.repeat(64) } } });
  assert.throws(() => checkBundle(withFile(files, MANIFEST_FILE, JSON.stringify(listed)), pinnedOf(), true), badRequest('data.json: missing'));
});

void test('filesOfDir refuses a symbolic link as the entry and a missing manifest', async (t) => {
  const dir = writeSkill(workDir(t));
  rmSync(join(dir, 'main.js'));
  writeFileSync(join(dir, 'real.js'), '1');
  symlinkSync(join(dir, 'real.js'), join(dir, 'main.js'));
  await assert.rejects(filesOfDir(dir), badRequest('not a regular file'));
  const empty = mkdtempSync(join(workDir(t), 'empty-'));
  await assert.rejects(filesOfDir(empty), badRequest('manifest.json: missing'));
});

void test('property: any single-byte change of main.js in a signed bundle is refused (file_mismatch)', async (t) => {
  const key = newKey();
  const files = await signedFiles(t, key);
  const main = files.get('main.js')!;
  const pinned = pinnedOf(key);
  assert.equal(checkBundle(files, pinned, false).signedBy, key.keyId);
  fc.assert(
    fc.property(fc.nat({ max: main.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, delta) => {
      const changed = Uint8Array.from(main);
      changed[at] = (changed[at]! + delta) % 256;
      assert.throws(() => checkBundle(withFile(files, 'main.js', changed), pinned, false), refusedFor('file_mismatch'));
    }),
    { numRuns: 300 },
  );
});
