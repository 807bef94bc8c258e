// Configuration errors stop `svc serve` with exit 78 (EX_CONFIG: systemd does not restart-loop on it)
// and a message listing every problem with its JSON path — never a stack trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempHome } from '../helpers/brain-process';
import { freePort, runSvc } from './fixtures/processes';

function home(t: { after: (fn: () => void) => void }, settings?: string): string {
  const dir = tempHome('svc-config-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  if (settings !== undefined) writeFileSync(join(dir, 'settings.json'), settings);
  return dir;
}

const serve = (dir: string, env: Record<string, string> = {}) => runSvc(['serve', '--port', '0'], { SVC_HOME: dir, ...env });

function assertNoStack(stderr: string): void {
  assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
  assert.doesNotMatch(stderr, /Error:/);
}

test('an invalid settings.json: exit 78, every problem listed with its JSON path', async (t) => {
  const dir = home(t, JSON.stringify({ server: { port: 'eighty', hots: 'x' }, log: { level: 'chatty' }, metrics: { public: 'yes' }, storage: { synchronous: 'OFF' } }));
  const r = await serve(dir);
  assert.equal(r.code, 78);
  assertNoStack(r.stderr);
  const file = join(dir, 'settings.json');
  assert.match(r.stderr, new RegExp(`^svc: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is invalid:\\n`));
  for (const path of ['/server/hots', '/server/port', '/log/level', '/metrics/public', '/storage/synchronous']) {
    assert.match(r.stderr, new RegExp(`\\n  - ${path}: `), path);
  }
  assert.equal(r.stdout, '', 'nothing was started, so nothing was logged');
  assert.ok(!existsSync(join(dir, 'brain.pid')));
});

test('settings.json that is not JSON: exit 78 with the parser message at path /', async (t) => {
  const dir = home(t, '{ "server": { "port": 9090, } }');
  const r = await serve(dir);
  assert.equal(r.code, 78);
  assertNoStack(r.stderr);
  assert.match(r.stderr, /is invalid:\n {2}- \/: not valid JSON \(.+\)\n$/);
});

test('settings.json that is JSON but not an object: exit 78', async (t) => {
  const r = await serve(home(t, '[1, 2]'));
  assert.equal(r.code, 78);
  assert.match(r.stderr, /- \/: must be a JSON object/);
});

test('bad environment values are configuration errors too (SVC_PORT, SVC_LOG_LEVEL, SVC_VAULT_KEY)', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ SVC_PORT: 'http' }, /^svc: SVC_PORT=http: expected a port number 0-65535\n$/],
    [{ SVC_LOG_LEVEL: 'verbose' }, /^svc: SVC_LOG_LEVEL=verbose: expected one of /],
    [{ SVC_VAULT_KEY: 'too-short' }, /^svc: SVC_VAULT_KEY: a vault key is 32 bytes written as 64 hex characters or base64\n$/],
  ];
  for (const [env, message] of cases) {
    // `serve --port 0` would override SVC_PORT, so this case runs without the flag.
    const r = env.SVC_PORT ? await runSvc(['serve'], { SVC_HOME: home(t), ...env }) : await serve(home(t), env);
    assert.equal(r.code, 78, JSON.stringify(env));
    assertNoStack(r.stderr);
    assert.match(r.stderr, message, JSON.stringify(env));
  }
});

test('settings of features this version does not have stop the brain with exit 78, and svc doctor names them', async (t) => {
  const dir = home(t, JSON.stringify({ webhooks: { allowed_ips: ['10.0.0.0/8'] }, server: { port: 0 } }));
  const file = await serve(dir);
  assert.equal(file.code, 78);
  assertNoStack(file.stderr);
  assert.match(file.stderr, /is invalid:\n {2}- \/webhooks: this version of svc has no webhook intake; remove the section\n$/);
  assert.ok(!existsSync(join(dir, 'brain.pid')));

  const env = await serve(home(t), { SVC_UPDATE_CHECK: '1' });
  assert.equal(env.code, 78);
  assertNoStack(env.stderr);
  assert.equal(env.stderr, 'svc: SVC_UPDATE_CHECK is set, but this version of svc has no scheduled release checks; unset it\n');

  const doctor = await runSvc(['doctor', '--json', '--url', `http://127.0.0.1:${await freePort()}`], { SVC_HOME: home(t), SVC_IOS_KEY_ID: 'K' });
  const checks = (JSON.parse(doctor.stdout) as { checks: { name: string; ok: boolean; detail: string }[] }).checks;
  const settings = checks.find((c) => c.name === 'settings');
  assert.equal(settings?.ok, false);
  assert.match(settings.detail, /^SVC_IOS_KEY_ID is set, but this version of svc has no push notifications; unset it$/);
});

test('a start that fails after taking the instance lock leaves no brain.pid behind', async (t) => {
  const dir = home(t);
  const r = await serve(dir, { SVC_VAULT_KEY: 'too-short' });
  assert.equal(r.code, 78);
  assert.ok(!existsSync(join(dir, 'brain.pid')), 'svc stop must never find a pid that a later process may reuse');
});
