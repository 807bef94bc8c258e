// What a publish must be: a skill with its files' digests and manifest.signed.json of the same manifest
// by the same key, a daemon with its entry; each refusal names its reason (signature, archive, manifest).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { checkBundle, checkDaemonFiles } from '../../../daemon/registry/bundle-check';
import { AppError } from '../../../daemon/kernel/errors';
import { packArchive, type ArchiveFile } from '../../../signing/archive';
import { signManifest } from '../../../signing/signed-manifest';
import { daemonFiles, publishBody, publisherKey, skillFiles, skillManifest, TEST_LIMITS } from '../../helpers/registry-bundles';

const KEY = publisherKey();
const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const replace = (files: ArchiveFile[], path: string, bytes: Uint8Array | null): ArchiveFile[] =>
  bytes === null ? files.filter((f) => f.path !== path) : files.map((f) => (f.path === path ? { path, bytes } : f));
const check = (kind: 'skill' | 'daemon', files: ArchiveFile[]) => checkBundle(publishBody(kind, packArchive(files), KEY), TEST_LIMITS.archive);
const refusedFor = (reason: string, message: RegExp) => (err: unknown) => err instanceof AppError && (err.details as { reason: string }).reason === reason && message.test(err.message);

void test('a signed skill and a daemon pass, named by skill_id and node_id', async () => {
  const skill = await check('skill', skillFiles(KEY, 'weather', '1.2.0'));
  assert.deepEqual([skill.kind, skill.name, skill.version, skill.displayName, skill.keyId], ['skill', 'weather', '1.2.0', 'Skill weather', KEY.keyId]);
  const daemon = await check('daemon', daemonFiles('garden-pump', '0.1.0', 'Pump'));
  assert.deepEqual([daemon.name, daemon.version, daemon.displayName], ['garden-pump', '0.1.0', 'Pump']);
  assert.equal(checkDaemonFiles(new Map(daemonFiles('x', '1.0.0').map((f) => [f.path, f.bytes]))).manifest.entry, 'bin/daemon.js');
});

void test('a skill is refused without its envelope, with an envelope of another manifest, with a changed file, or a missing entry', async () => {
  const files = skillFiles(KEY, 'weather', '1.0.0');
  await assert.rejects(check('skill', replace(files, 'manifest.signed.json', null)), refusedFor('manifest', /carries manifest\.signed\.json/));
  const other = signManifest({ ...skillManifest('weather', '1.0.0'), description: 'something else' }, KEY);
  await assert.rejects(check('skill', replace(files, 'manifest.signed.json', text(JSON.stringify(other)))), refusedFor('manifest', /signs another manifest/));
  await assert.rejects(check('skill', replace(files, 'main.js', text('export default () => "changed";'))), refusedFor('manifest', /main\.js: its sha256/));
  await assert.rejects(check('skill', replace(files, 'main.js', null)), refusedFor('manifest', /entry main\.js is not in the archive/));
  await assert.rejects(check('skill', replace(files, 'manifest.json', text('{"id": 1}'))), refusedFor('manifest', /not a skill manifest/));
  await assert.rejects(check('daemon', replace(files, 'manifest.json', null)), refusedFor('manifest', /no manifest\.json/));
});

void test('an archive past the registry\'s size is 413, a file past its entry size is refused, and so is a daemon without its entry', async () => {
  const big = [...daemonFiles('p', '1.0.0'), { path: 'blob.bin', bytes: new Uint8Array(randomBytes(TEST_LIMITS.archive.maxTotalBytes + 1)) }];
  await assert.rejects(check('daemon', big), (err: unknown) => err instanceof AppError && err.status === 413);
  const compressible = [...daemonFiles('p', '1.0.0'), { path: 'zeros.bin', bytes: new Uint8Array(TEST_LIMITS.archive.maxEntryBytes + 1) }];
  await assert.rejects(check('daemon', compressible), refusedFor('archive', /zeros\.bin: \d+ bytes, more than/));
  await assert.rejects(check('daemon', replace(daemonFiles('p', '1.0.0'), 'bin/daemon.js', null)), refusedFor('manifest', /entry bin\/daemon\.js/));
});
