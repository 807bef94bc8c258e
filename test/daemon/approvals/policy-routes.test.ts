// daemon/approvals/policy-routes.ts through the assembled brain: GET shows the policies in force, PUT
// changes a level's or a tool's, the very next tool call follows it (no restart), settings.json keeps
// it with every other setting (test/e2e/twin.test.ts restarts a brain on it), and bad bodies are 400s
// that change nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { approvalsRig } from './approvals-rig';

const call = { tool: 'reboot', safety: 'privileged' as const, args: { delay: 0 }, sessionId: 's1', turnId: 't' };

void test('GET shows the defaults; PUT applies to the next call and is written to settings.json', async (t) => {
  const rig = await approvalsRig(t);
  const home = rig.context.home;
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ server: { port: 0 }, approvals: { ttl_minutes: 60 } }));
  const shown = await rig.api('GET', '/api/approvals/policies');
  assert.equal(shown.statusCode, 200, shown.body);
  assert.deepEqual(shown.json(), { policies: { passive: 'auto', active: 'auto', privileged: 'ask', dangerous: 'ask' }, tools: {} });
  assert.equal((await rig.context.permissions.check(call)).verdict, 'pending');

  const byTool = await rig.api('PUT', '/api/approvals/policies', { target: 'reboot', policy: 'deny' });
  assert.equal(byTool.statusCode, 200, byTool.body);
  assert.deepEqual((byTool.json() as { tools: unknown }).tools, { reboot: 'deny' });
  assert.equal((await rig.context.permissions.check(call)).verdict, 'deny', 'applied without a restart');

  const byLevel = await rig.api('PUT', '/api/approvals/policies', { target: 'privileged', policy: 'auto' });
  assert.equal((byLevel.json() as { policies: { privileged: string } }).policies.privileged, 'auto');
  assert.equal((await rig.context.permissions.check({ ...call, tool: 'other' })).verdict, 'allow');
  assert.equal((await rig.context.permissions.check(call)).verdict, 'deny', 'the tool override wins over its level');

  assert.deepEqual(JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')), { server: { port: 0 }, approvals: { ttl_minutes: 60, tools: { reboot: 'deny' }, policies: { privileged: 'auto' } } });
});

void test('bad bodies are 400 BAD_REQUEST and change nothing', async (t) => {
  const rig = await approvalsRig(t);
  for (const body of [{ target: 'privileged', policy: 'maybe' }, { target: '', policy: 'ask' }, { target: 'two words', policy: 'ask' }, { target: 'x'.repeat(65), policy: 'ask' }, { target: 'reboot' }, { target: 'reboot', policy: 'ask', extra: 1 }, 'nonsense']) {
    const r = await rig.api('PUT', '/api/approvals/policies', body, typeof body === 'string' ? { 'content-type': 'application/json' } : {});
    assert.equal(r.statusCode, 400, `${JSON.stringify(body)}: ${r.body}`);
    assert.equal((r.json() as { error: { code: string } }).error.code, 'BAD_REQUEST');
  }
  assert.deepEqual((await rig.api('GET', '/api/approvals/policies')).json(), { policies: { passive: 'auto', active: 'auto', privileged: 'ask', dangerous: 'ask' }, tools: {} });
  assert.equal((await rig.context.permissions.check(call)).verdict, 'pending');
});
