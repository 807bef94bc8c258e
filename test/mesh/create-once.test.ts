// mesh/create-once.ts: a file made once (0600), never replaced, no temp file left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOnce, readIfExists } from '../../mesh/create-once';

void test('the first content stays: a second call changes nothing, the file is 0600, no temp file remains', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-create-once-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'brain-id');
  createOnce(file, 'first\n');
  createOnce(file, 'second\n');
  assert.equal(readFileSync(file, 'utf8'), 'first\n');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(dir), ['brain-id']);
  assert.throws(() => createOnce(join(dir, 'missing', 'x'), 'y'), { code: 'ENOENT' });
  assert.equal(readIfExists(file), 'first\n');
  assert.equal(readIfExists(join(dir, 'nothing')), undefined);
  assert.throws(() => readIfExists(dir), { code: 'EISDIR' }, 'only a missing file is undefined');
});
