// The approvals capability in a whole brain assembled in-process (daemon/brain.ts, the real capability
// list) with one test capability that owns a privileged tool: the permission plane asks, the request
// is listed over HTTP, approve runs the tool once, a second approve is a 404, reject never runs it,
// and the queue gauge follows. The agent's tool runner asks the same plane (test/daemon/agent/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approvalsRig, type Rig } from './approvals-rig';

const hold = async (rig: Rig, sessionId = 's1'): Promise<string> => {
  const decision = await rig.context.permissions.check({ tool: 'reboot', safety: 'privileged', args: { delay: 3 }, sessionId, turnId: 't1' });
  assert.equal(decision.verdict, 'pending');
  return decision.verdict === 'pending' ? decision.requestId : '';
};

void test('ask → pending → listed → approve runs the tool once → a second approve is a 404', async (t) => {
  const rig = await approvalsRig(t);
  assert.equal(rig.brain.metrics.registry.owners().get('svc_supervisor_approval_queue'), 'approvals');
  assert.equal(await rig.queued(), '0');
  assert.deepEqual((await rig.context.permissions.check({ tool: 'status', safety: 'passive', args: {}, sessionId: 's1', turnId: 't1' })).verdict, 'allow');
  const id = await hold(rig);
  assert.equal(await rig.queued(), '1');

  const list = await rig.api('GET', '/api/approvals');
  assert.equal(list.statusCode, 200, list.body);
  const body = list.json() as { count: number; approvals: { request_id: string; created_at: number }[] };
  assert.equal(body.count, 1);
  assert.deepEqual(body.approvals[0], { request_id: id, session_id: 's1', tool_name: 'reboot', args: { delay: 3 }, safety_level: 'privileged', created_at: body.approvals[0]!.created_at, status: 'pending' });

  const approve = await rig.api('POST', `/api/approvals/${id}/approve`, '', { 'content-type': 'application/json' });
  assert.equal(approve.statusCode, 200, approve.body);
  assert.deepEqual(approve.json(), { success: true, status: 'approved', request_id: id, session_id: 's1', tool_name: 'reboot', summary: 'rebooting in 3s', result: { status: 'ok', summary: 'rebooting in 3s' } });
  const again = await rig.api('POST', `/api/approvals/${id}/approve`, {});
  assert.equal(again.statusCode, 404);
  assert.equal((again.json() as { error: { code: string } }).error.code, 'NOT_FOUND');
  assert.deepEqual(rig.runs, [{ delay: 3 }]);
  assert.equal(await rig.queued(), '0');
  assert.deepEqual(rig.events.filter((e) => e.type.startsWith('approval_')).map((e) => e.type), ['approval_requested', 'approval_resolved']);
});

void test('two concurrent approvals over HTTP: one 200, one 404, one run', async (t) => {
  const rig = await approvalsRig(t);
  const id = await hold(rig);
  const answers = await Promise.all([rig.api('POST', `/api/approvals/${id}/approve`), rig.api('POST', `/api/approvals/${id}/approve`)]);
  assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 404]);
  assert.equal(rig.runs.length, 1);
});

void test('reject never runs the tool; another session is a 409 session_mismatch that changes nothing', async (t) => {
  const rig = await approvalsRig(t);
  const id = await hold(rig, 'phone');
  const mismatch = await rig.api('POST', `/api/approvals/${id}/reject`, { session_id: 'laptop' });
  assert.equal(mismatch.statusCode, 409);
  assert.deepEqual(mismatch.json(), { error: { code: 'CONFLICT', message: `approval request ${id} belongs to another session`, details: { reason: 'session_mismatch', request_session_id: 'phone', given_session_id: 'laptop' } } });
  const reject = await rig.api('POST', `/api/approvals/${id}/reject`, { session_id: 'phone' });
  assert.equal(reject.statusCode, 200, reject.body);
  assert.deepEqual(reject.json(), { success: true, status: 'rejected', request_id: id, session_id: 'phone', tool_name: 'reboot' });
  assert.equal((await rig.api('POST', `/api/approvals/${id}/approve`)).statusCode, 404);
  assert.deepEqual(rig.runs, []);
});

void test('the settings section decides: privileged on deny refuses the call, a tool override on auto allows it', async (t) => {
  const denying = await approvalsRig(t, { approvals: { policies: { privileged: 'deny' } } });
  assert.equal((await denying.context.permissions.check({ tool: 'reboot', safety: 'privileged', args: { delay: 1 }, sessionId: 's', turnId: 't' })).verdict, 'deny');
  const trusting = await approvalsRig(t, { approvals: { tools: { reboot: 'auto' } } });
  assert.equal((await trusting.context.permissions.check({ tool: 'reboot', safety: 'privileged', args: { delay: 1 }, sessionId: 's', turnId: 't' })).verdict, 'allow');
});

void test('a restart keeps pending requests: listed again, the gauge counts them from the start, approve runs the tool', async (t) => {
  const first = await approvalsRig(t);
  const id = await hold(first);
  await first.stop();
  const second = await approvalsRig(t, {}, first.context.home);
  assert.equal(await second.queued(), '1');
  assert.deepEqual(((await second.api('GET', '/api/approvals')).json() as { approvals: { request_id: string }[] }).approvals.map((a) => a.request_id), [id]);
  assert.equal((await second.api('POST', `/api/approvals/${id}/approve`)).statusCode, 200);
  assert.deepEqual([first.runs, second.runs], [[], [{ delay: 3 }]]);
});
