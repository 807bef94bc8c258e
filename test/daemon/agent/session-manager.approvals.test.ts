// The originating session is not left hanging (spec 2.6, docs/approvals.md): in a whole brain assembled
// in-process, a call held by the permission plane reaches the session's clients as approval_requested;
// approving over HTTP sends approval_resolved and the tool's outcome as a tool_result, and the
// conversation records it for the next turn; a rejection is told too and counted in
// svc_tool_denials_total. Other sessions hear nothing. On the agent alone: vault secrets are scrubbed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { BrainMessage } from '../../../protocol/session';
import { EventBus } from '../../../daemon/kernel/event-bus';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { approvalNote } from '../../../daemon/agent/session-manager';
import { RecordingClient, ScriptedProvider, makeAgent, say } from './agent-fixtures';
import { approvalsRig, type Rig } from '../approvals/approvals-rig';

const hold = async (rig: Rig, sessionId: string): Promise<string> => {
  const decision = await rig.context.permissions.check({ tool: 'reboot', safety: 'privileged', args: { delay: 3 }, sessionId, turnId: 'turn_1' });
  assert.equal(decision.verdict, 'pending');
  return decision.verdict === 'pending' ? decision.requestId : '';
};

const denials = async (rig: Rig): Promise<string | undefined> =>
  /^svc_tool_denials_total\{tool="reboot"\} (\d+)$/m.exec((await rig.brain.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' })).body)?.[1];

void test('held → approval_requested to the session\'s clients → approve → approval_resolved and the tool_result', async (t) => {
  const rig = await approvalsRig(t);
  const session = rig.brain.agent.sessions.open();
  const other = rig.brain.agent.sessions.open();
  const [client, bystander] = [new RecordingClient('c'), new RecordingClient('b')];
  rig.brain.agent.sessions.attach(session, client);
  rig.brain.agent.sessions.attach(other, bystander);

  const id = await hold(rig, session.id);
  assert.equal(client.frames.length, 1);
  const requested = client.frames[0]!;
  assert.ok(Value.Check(BrainMessage, requested), 'the frame is in the wire contract');
  assert.ok(requested.type === 'approval_requested');
  assert.deepEqual(requested, {
    type: 'approval_requested',
    session_id: session.id,
    payload: { request_id: id, session_id: session.id, tool_name: 'reboot', args: { delay: 3 }, safety_level: 'privileged', created_at: requested.payload.created_at, status: 'pending', turn_id: 'turn_1' },
  });
  const listed = (await rig.api('GET', '/api/approvals')).json() as { approvals: { created_at: number }[] };
  assert.equal(requested.payload.created_at, listed.approvals[0]!.created_at, 'created_at is the request\'s (spec 2.6)');

  const approve = await rig.api('POST', `/api/approvals/${id}/approve`, {});
  assert.equal(approve.statusCode, 200, approve.body);
  assert.deepEqual(client.frames.slice(1), [
    { type: 'approval_resolved', session_id: session.id, payload: { request_id: id, turn_id: 'turn_1', tool_name: 'reboot', status: 'approved' } },
    { type: 'tool_result', session_id: session.id, payload: { turn_id: 'turn_1', call_id: id, name: 'reboot', status: 'ok', summary: 'rebooting in 3s' } },
  ]);
  for (const frame of client.frames) assert.ok(Value.Check(BrainMessage, frame), frame.type);
  assert.deepEqual(bystander.frames, [], 'another session hears nothing');
  assert.deepEqual(session.messages().at(-1), { role: 'assistant', content: `[approval] You approved reboot (approval request ${id}); it ran: rebooting in 3s` });
  assert.equal(other.messages().length, 0);
  assert.equal(await denials(rig), '0', 'an approval is not a denial');
});

void test('a rejection is told to the session and counted as a denial of the tool', async (t) => {
  const rig = await approvalsRig(t);
  const session = rig.brain.agent.sessions.open();
  const client = new RecordingClient();
  rig.brain.agent.sessions.attach(session, client);
  const id = await hold(rig, session.id);
  assert.equal(await denials(rig), '0');
  const reject = await rig.api('POST', `/api/approvals/${id}/reject`, {});
  assert.equal(reject.statusCode, 200, reject.body);
  assert.deepEqual(client.types(), ['approval_requested', 'approval_resolved']);
  assert.deepEqual(client.frames[1], { type: 'approval_resolved', session_id: session.id, payload: { request_id: id, turn_id: 'turn_1', tool_name: 'reboot', status: 'rejected' } });
  assert.deepEqual(rig.runs, []);
  assert.equal(await denials(rig), '1');
  assert.deepEqual(session.messages().at(-1), { role: 'assistant', content: `[approval] You rejected reboot (approval request ${id}); it did not run.` });
});

void test('a request of a session that has ended (or never lived in this brain) is still held; nobody is told', async (t) => {
  const rig = await approvalsRig(t);
  const session = rig.brain.agent.sessions.open();
  const client = new RecordingClient();
  rig.brain.agent.sessions.attach(session, client);
  await rig.brain.agent.sessions.end(session.id, 'closed_by_client');
  const before = client.frames.length;
  const id = await hold(rig, session.id);
  await hold(rig, 'ses_unknown');
  assert.equal(client.frames.length, before);
  assert.equal((await rig.api('POST', `/api/approvals/${id}/approve`, {})).statusCode, 200);
  assert.equal(client.frames.length, before);
  assert.deepEqual(rig.runs, [{ delay: 3 }]);
});

void test('the agent scrubs vault secrets from held args and the approved summary before clients or the conversation see them', () => {
  const bus = new EventBus<BrainEvent>((_owner, err) => { throw err; });
  const { agent } = makeAgent(new ScriptedProvider([() => say('hi')]), { bus, secrets: ['hunter2-secret-value'] });
  const session = agent.sessions.open();
  const client = new RecordingClient();
  agent.sessions.attach(session, client);
  bus.emit({ type: 'approval_requested', category: 'approval', priority: 'high', requestId: 'apr_1', sessionId: session.id, turnId: 'turn_1', tool: 'run_command', safety: 'privileged', args: { argv: ['login', 'hunter2-secret-value'] }, createdAt: 1_700_000_000.5, at: 1 });
  bus.emit({ type: 'approval_resolved', requestId: 'apr_1', sessionId: session.id, turnId: 'turn_1', tool: 'run_command', status: 'approved', result: { status: 'error', summary: 'exit 1: bad password hunter2-secret-value' }, at: 2 });
  assert.deepEqual(client.types(), ['approval_requested', 'approval_resolved', 'tool_result']);
  const seen = JSON.stringify(client.frames) + JSON.stringify(session.messages());
  assert.ok(!seen.includes('hunter2-secret-value'), seen);
  assert.match(String(session.messages().at(-1)?.content), /^\[approval\] You approved run_command \(approval request apr_1\); it failed: exit 1: bad password /);
});

void test('approvalNote says how every kind of ending went', () => {
  const base = { type: 'approval_resolved', requestId: 'apr_9', sessionId: 's', turnId: 't', tool: 'reboot', at: 0 } as const;
  assert.equal(approvalNote({ ...base, status: 'expired' }), '[approval] reboot (approval request apr_9) expired without an answer; it did not run.');
  assert.equal(approvalNote({ ...base, status: 'rejected' }), '[approval] You rejected reboot (approval request apr_9); it did not run.');
  assert.equal(approvalNote({ ...base, status: 'approved', result: { status: 'ok', summary: 'done' } }), '[approval] You approved reboot (approval request apr_9); it ran: done');
});
