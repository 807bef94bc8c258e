// Packing an installed daemon's folder: the files of an extracted archive packed again give the same
// bytes as the archive packArchive made (a publisher who packed with svc publish gets the signed bytes
// back), in any order of creation; a symlink in the folder is refused, never followed; a missing folder
// is ENOENT for the caller to word.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packInstalledDaemon } from '../../../daemon/registry/daemon-delivery-bundle';
import { ArchiveError, DEFAULT_ARCHIVE_LIMITS, extractArchive, packArchive, readArchiveFiles } from '../../../signing/archive';
import { daemonFiles } from '../../helpers/registry-bundles';

const scratch = (t: { after(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-delivery-bundle-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

void test('an extracted archive packs back to the same bytes', async (t) => {
  const dir = scratch(t);
  const archive = packArchive(daemonFiles('rpi-garden', '1.0.0'));
  await extractArchive(archive, join(dir, 'installed'));
  const again = await packInstalledDaemon(join(dir, 'installed'), DEFAULT_ARCHIVE_LIMITS);
  assert.deepEqual(Buffer.from(again), Buffer.from(archive));
});

void test('files written in another order give the same bytes; nested folders keep their paths', async (t) => {
  const dir = scratch(t);
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  mkdirSync(join(a, 'lib', 'x'), { recursive: true });
  writeFileSync(join(a, 'main.js'), 'm');
  writeFileSync(join(a, 'lib', 'x', 'y.js'), 'y');
  mkdirSync(join(b, 'lib', 'x'), { recursive: true });
  writeFileSync(join(b, 'lib', 'x', 'y.js'), 'y');
  writeFileSync(join(b, 'main.js'), 'm');
  const packedA = await packInstalledDaemon(a, DEFAULT_ARCHIVE_LIMITS);
  assert.deepEqual(Buffer.from(packedA), Buffer.from(await packInstalledDaemon(b, DEFAULT_ARCHIVE_LIMITS)));
  assert.deepEqual([...(await readArchiveFiles(packedA)).keys()].sort(), ['lib/x/y.js', 'main.js']);
});

void test('a symlink is refused; a missing folder is ENOENT; too many files is refused', async (t) => {
  const dir = scratch(t);
  const folder = join(dir, 'installed');
  mkdirSync(folder);
  writeFileSync(join(folder, 'main.js'), 'm');
  symlinkSync('/etc/passwd', join(folder, 'passwd'));
  await assert.rejects(packInstalledDaemon(folder, DEFAULT_ARCHIVE_LIMITS), ArchiveError);
  await assert.rejects(packInstalledDaemon(join(dir, 'nope'), DEFAULT_ARCHIVE_LIMITS), (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT');
  rmSync(join(folder, 'passwd'));
  writeFileSync(join(folder, 'other.js'), 'o');
  await assert.rejects(packInstalledDaemon(folder, { ...DEFAULT_ARCHIVE_LIMITS, maxEntries: 1 }), ArchiveError);
});
