// svc twin against a loopback HTTP server that answers like /api/approvals: the pending list as a
// table, an empty hint or JSON; approve and reject send the session id and print the outcome; refusals
// print the brain's message on one line and exit 1; policies are shown and set through
// /api/approvals/policies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { age, approvalsList, approvalsResolve, policiesSet, policiesShow, summariseArgs } from '../../../cli/commands/twin';
import { fakeBrain, io } from '../../helpers/cli-rig';

const request = { request_id: 'req-1', session_id: 'sess-1', tool_name: 'run_command', args: { argv: ['ls', '-l'], cwd: '/home/pi' }, safety_level: 'privileged', created_at: 1000.5, status: 'pending' };

void test('svc twin approvals lists the pending requests with their age and a summary of the args', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [200, { count: 1, approvals: [request] }]);
  const { io: cli, text } = io();
  assert.equal(await approvalsList(conn, cli, { json: false, now: 1000.5 + 300 }), 0);
  assert.deepEqual(seen, [{ method: 'GET', url: '/api/approvals', body: undefined }]);
  const [head, row] = text.out.trimEnd().split('\n');
  assert.match(head!, /^ID\s+TOOL\s+LEVEL\s+SESSION\s+AGE\s+ARGS$/);
  assert.match(row!, /^req-1\s+run_command\s+privileged\s+sess-1\s+5m\s+argv=\["ls","-l"\] cwd=\/home\/pi$/);
});

void test('svc twin approvals prints a hint when nothing waits, and JSON with --json', async (t) => {
  const { conn } = await fakeBrain(t, () => [200, { count: 0, approvals: [] }]);
  const { io: cli, text } = io();
  assert.equal(await approvalsList(conn, cli, { json: false, now: 0 }), 0);
  assert.equal(text.out, 'no tool calls are waiting for approval\n');
  const { io: j, text: jt } = io();
  assert.equal(await approvalsList(conn, j, { json: true, now: 0 }), 0);
  assert.deepEqual(JSON.parse(jt.out), []);
});

void test('svc twin approvals approve sends the session id and prints the summary', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [200, { success: true, status: 'approved', request_id: 'req-1', session_id: 'sess-1', tool_name: 'run_command', summary: 'exit 0\nfile list', result: { status: 'ok', summary: 'exit 0' } }]);
  const { io: cli, text } = io();
  assert.equal(await approvalsResolve(conn, cli, { action: 'approve', id: 'req-1', session: 'sess-1' }), 0);
  assert.deepEqual(seen, [{ method: 'POST', url: '/api/approvals/req-1/approve', body: { session_id: 'sess-1' } }]);
  assert.equal(text.out, 'approved req-1 (run_command): exit 0 file list\n');
});

void test('svc twin approvals reject sends an empty body and says the call will not run', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [200, { success: true, status: 'rejected', request_id: 'req-1', session_id: 'sess-1', tool_name: 'run_command' }]);
  const { io: cli, text } = io();
  assert.equal(await approvalsResolve(conn, cli, { action: 'reject', id: 'req-1' }), 0);
  assert.deepEqual(seen, [{ method: 'POST', url: '/api/approvals/req-1/reject', body: {} }]);
  assert.equal(text.out, 'rejected req-1 (run_command); it will not run\n');
});

void test('svc twin approvals approve: 404 and 409 print the brain message on one line and exit 1', async (t) => {
  for (const [status, code, message] of [
    [404, 'NOT_FOUND', 'no pending approval request nope'],
    [409, 'session_mismatch', 'request req-1 belongs to session sess-1, not sess-2'],
  ] as const) {
    const { conn, seen } = await fakeBrain(t, () => [status, { error: { code, message, details: null } }]);
    const { io: cli, text } = io();
    assert.equal(await approvalsResolve(conn, cli, { action: 'approve', id: 'a/b', session: 'sess-2' }), 1);
    assert.equal(seen[0]!.url, '/api/approvals/a%2Fb/approve', 'the id is one path segment');
    assert.equal(text.err, `svc: ${message}\n`);
    assert.equal(text.out, '');
  }
});

const defaults = { policies: { passive: 'auto', active: 'auto', privileged: 'ask', dangerous: 'ask' }, tools: {} };

void test('svc twin policies shows the levels and the per-tool overrides, or JSON with --json', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [200, { ...defaults, tools: { run_command: 'deny', fetch_url: 'auto' } }]);
  const { io: cli, text } = io();
  assert.equal(await policiesShow(conn, cli, { json: false }), 0);
  assert.deepEqual(seen, [{ method: 'GET', url: '/api/approvals/policies', body: undefined }]);
  assert.match(text.out, /^LEVEL\s+POLICY\npassive\s+auto\nactive\s+auto\nprivileged\s+ask\ndangerous\s+ask\n\nTOOL\s+POLICY\nfetch_url\s+auto\nrun_command\s+deny\n$/);
  const { io: j, text: jt } = io();
  assert.equal(await policiesShow(conn, j, { json: true }), 0);
  assert.deepEqual(JSON.parse(jt.out), { ...defaults, tools: { run_command: 'deny', fetch_url: 'auto' } });
});

void test('svc twin policies says when no tool has its own policy', async (t) => {
  const { conn } = await fakeBrain(t, () => [200, defaults]);
  const { io: cli, text } = io();
  await policiesShow(conn, cli, { json: false });
  assert.match(text.out, /no per-tool overrides\n$/);
});

void test('svc twin policies set sends the target and policy and says what changed', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [200, defaults]);
  const { io: cli, text } = io();
  assert.equal(await policiesSet(conn, cli, { target: 'privileged', policy: 'auto' }), 0);
  assert.equal(await policiesSet(conn, cli, { target: 'run_command', policy: 'deny' }), 0);
  assert.deepEqual(seen.map((s) => [s.method, s.url, s.body]), [
    ['PUT', '/api/approvals/policies', { target: 'privileged', policy: 'auto' }],
    ['PUT', '/api/approvals/policies', { target: 'run_command', policy: 'deny' }],
  ]);
  assert.equal(text.out, 'the policy of privileged tools is now auto\nthe policy of the tool run_command is now deny\n');
});

void test('svc twin policies set: a bad policy or target is exit 2 without a call; a refusal is exit 1', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [400, { error: { code: 'BAD_REQUEST', message: 'body/target: too long', details: null } }]);
  const { io: cli, text } = io();
  assert.equal(await policiesSet(conn, cli, { target: 'privileged', policy: 'maybe' }), 2);
  assert.equal(await policiesSet(conn, cli, { target: 'two words', policy: 'ask' }), 2);
  assert.match(text.err, /expected one of auto, ask, deny/);
  assert.deepEqual(seen, []);
  const { io: r, text: rt } = io();
  assert.equal(await policiesSet(conn, r, { target: 'privileged', policy: 'ask' }), 1);
  assert.equal(rt.err, 'svc: body/target: too long\n');
});

void test('summariseArgs is one line of at most max characters; age is never negative', () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.integer({ min: 2, max: 200 }), (args, max) => {
      const s = summariseArgs(args, max);
      assert.ok(s.length <= max);
      assert.ok(!/\n/.test(s));
    }),
  );
  fc.assert(fc.property(fc.double({ noNaN: true, min: -1e9, max: 1e9 }), (s) => assert.match(age(s), /^\d+[smhd]$/)));
});
