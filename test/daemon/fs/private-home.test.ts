// tightenHome: entries of $SVC_HOME left open by an older brain or another tool become 0600/0700 at
// start (issue 8 §5); private ones and symbolic links are not touched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, lstatSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tightenHome } from '../../../daemon/fs/private-home';

void test('open files and directories become private; private ones and links are left alone', (t) => {
  const home = mkdtempSync(join(tmpdir(), 'svc-home-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  writeFileSync(join(home, 'brain.db'), 'x');
  chmodSync(join(home, 'brain.db'), 0o644);
  writeFileSync(join(home, 'api-token'), 'x', { mode: 0o600 });
  writeFileSync(join(home, 'tool.sh'), 'x');
  chmodSync(join(home, 'tool.sh'), 0o775);
  mkdirSync(join(home, 'brain.db.lock'));
  chmodSync(join(home, 'brain.db.lock'), 0o777);
  symlinkSync('/etc/hostname', join(home, 'link'));
  assert.deepEqual(tightenHome(home).sort(), ['brain.db', 'brain.db.lock', 'tool.sh']);
  const mode = (name: string): number => statSync(join(home, name)).mode & 0o777;
  assert.equal(mode('brain.db'), 0o600);
  assert.equal(mode('api-token'), 0o600);
  assert.equal(mode('tool.sh'), 0o700);
  assert.equal(mode('brain.db.lock'), 0o700);
  assert.ok(lstatSync(join(home, 'link')).isSymbolicLink());
  assert.deepEqual(tightenHome(home), [], 'nothing left to do');
});
