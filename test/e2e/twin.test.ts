// svc twin against the built brain: the approvals queue starts empty, approving an unknown request is
// exit 1 with the brain's message on one line, the policies show the defaults, and a policy set
// applies at once and is kept in settings.json across a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SVC, startBrain, tempHome } from '../helpers/brain-process';

const svc = (url: string, home: string, token: string, args: string[]) =>
  spawnSync(process.execPath, [SVC, ...args, '--url', url], { env: { ...process.env, SVC_HOME: home, SVC_API_TOKEN: token }, encoding: 'utf8', timeout: 20_000 });

void test('svc twin approvals and policies against a real brain', async (t) => {
  const home = tempHome();
  let brain = await startBrain({ home, keepHome: true });
  t.after(async () => {
    await brain.stop();
    rmSync(home, { recursive: true, force: true });
  });
  const run = (...args: string[]) => svc(brain.url, home, brain.token, args);

  const empty = run('twin', 'approvals');
  assert.equal(empty.status, 0, empty.stderr);
  assert.equal(empty.stdout, 'no tool calls are waiting for approval\n');
  assert.deepEqual(JSON.parse(run('twin', 'approvals', '--json').stdout), []);

  for (const action of ['approve', 'reject']) {
    const unknown = run('twin', 'approvals', action, 'no-such-request', '--session', 'sess-1');
    assert.equal(unknown.status, 1, unknown.stdout);
    assert.match(unknown.stderr, /^svc: .*no-such-request.*\n$/);
    assert.equal(unknown.stderr.split('\n').length, 2, 'one line');
  }
  assert.equal(run('twin', 'approvals', 'approve').status, 2, 'a missing <id> is bad usage');
  assert.equal(run('twin').status, 2);

  const shown = run('twin', 'policies');
  assert.equal(shown.status, 0, shown.stderr);
  assert.match(shown.stdout, /^LEVEL\s+POLICY\npassive\s+auto\nactive\s+auto\nprivileged\s+ask\ndangerous\s+ask\n/);

  const bad = run('twin', 'policies', 'set', 'privileged', 'sometimes');
  assert.equal(bad.status, 2);
  const set = run('twin', 'policies', 'set', 'run_command', 'deny');
  assert.equal(set.status, 0, set.stderr);
  assert.equal(set.stdout, 'the policy of the tool run_command is now deny\n');
  assert.equal(run('twin', 'policies', 'set', 'dangerous', 'deny').status, 0);
  const changed = { policies: { passive: 'auto', active: 'auto', privileged: 'ask', dangerous: 'deny' }, tools: { run_command: 'deny' } };
  assert.deepEqual(JSON.parse(run('twin', 'policies', '--json').stdout), changed, 'in force without a restart');
  const settings = JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')) as { approvals: unknown };
  assert.deepEqual(settings.approvals, { tools: { run_command: 'deny' }, policies: { dangerous: 'deny' } });

  // Kept in settings.json: a brain started again on the home validates the file and applies it.
  assert.equal(await brain.stop(), 0);
  brain = await startBrain({ home, keepHome: true });
  assert.deepEqual(JSON.parse(run('twin', 'policies', '--json').stdout), changed);
});
