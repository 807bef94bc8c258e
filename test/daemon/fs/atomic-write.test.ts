// writeFileAtomic: the file gets exactly the mode asked for, whatever the umask and whatever a temp
// file left by a crash had (issue 8 §5); the old content stays until the rename.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../../daemon/fs/atomic-write';

void test('mode is exact under umask 000, and over a leftover temp file that was world-writable', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-atomic-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const old = process.umask(0);
  t.after(() => process.umask(old));
  const file = join(dir, 'vault.json');
  writeFileSync(join(dir, `.vault.json.${process.pid}.tmp`), 'torn', { mode: 0o666 });
  writeFileAtomic(file, 'secret');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(readFileSync(file, 'utf8'), 'secret');
  writeFileAtomic(file, 'next', 0o640);
  assert.equal(statSync(file).mode & 0o777, 0o640);
});
