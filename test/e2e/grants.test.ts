// Folder grants through the built brain and the svc CLI: svc grant add/list/revoke and GET /api/grants
// agree, a grant survives a restart, and bad input is a 400 envelope.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SVC, startBrain, tempHome } from '../helpers/brain-process';
import type { Grant, GrantList } from '../../protocol/files';

const svc = (url: string, home: string, token: string, args: string[], cwd?: string) =>
  spawnSync(process.execPath, [SVC, ...args, '--url', url], { env: { ...process.env, SVC_HOME: home, SVC_API_TOKEN: token }, encoding: 'utf8', timeout: 20_000, cwd });

void test('svc grant add/list/revoke against a real brain; a grant survives a restart', async (t) => {
  const home = tempHome();
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-grants-e2e-')));
  mkdirSync(join(dir, 'docs'));
  symlinkSync(join(dir, 'docs'), join(dir, 'alias'));
  let brain = await startBrain({ home, keepHome: true });
  t.after(async () => {
    await brain.stop();
    rmSync(home, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });
  const grants = async () => ((await (await brain.api('/api/grants')).json()) as GrantList).grants;

  const added = svc(brain.url, home, brain.token, ['grant', 'add', 'alias', '--write', '--for', '2h'], dir);
  assert.equal(added.status, 0, added.stderr);
  assert.match(added.stdout, new RegExp(`granted read and write access to ${join(dir, 'docs')} until 20`));
  const [g] = await grants();
  assert.equal(g?.path, join(dir, 'docs'), 'stored as the realpath');
  assert.equal(g?.mode, 'write');

  const listed = svc(brain.url, home, brain.token, ['grant', 'list', '--json']);
  assert.deepEqual(JSON.parse(listed.stdout) as Grant[], [g]);
  assert.match(svc(brain.url, home, brain.token, ['grant', 'list']).stdout, /PATH\s+MODE\s+EXPIRES\n.*docs\s+write/);

  const bad = svc(brain.url, home, brain.token, ['grant', 'add', join(dir, 'missing')]);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /does not exist/);
  const badApi = await brain.api('/api/grants', { method: 'POST', body: JSON.stringify({ path: join(dir, 'docs'), for: 'forever' }) });
  assert.equal(badApi.status, 400);
  assert.equal(((await badApi.json()) as { error: { code: string } }).error.code, 'BAD_REQUEST');

  assert.equal(await brain.stop(), 0);
  brain = await startBrain({ home, keepHome: true });
  assert.deepEqual(await grants(), [g]);

  const revoked = svc(brain.url, home, brain.token, ['grant', 'revoke', join(dir, 'docs')]);
  assert.equal(revoked.status, 0, revoked.stderr);
  assert.deepEqual(await grants(), []);
  assert.match(svc(brain.url, home, brain.token, ['grant', 'list']).stdout, /no folders granted/);
  assert.equal(svc(brain.url, home, brain.token, ['grant', 'revoke', join(dir, 'docs')]).status, 1);
});
