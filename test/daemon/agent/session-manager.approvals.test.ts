// The originating session is not left hanging (spec 2.6, docs/approvals.md): in a whole brain assembled
// in-process, a call held by the permission plane reaches the session's clients as approval_requested;
// approving over HTTP sends approval_resolved and the tool's outcome as a tool_result, and a
// continuation turn (continues = the held turn) answers with the outcome; a rejection is told and
// continued too, and counted in svc_tool_denials_total. Other sessions hear nothing. On the agent
// alone: the model's continuation request, vault secrets scrubbed, a full queue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { BrainMessage } from '../../../protocol/session';
import { EventBus } from '../../../daemon/kernel/event-bus';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { RecordingClient, ScriptedProvider, deferred, makeAgent, say } from './agent-fixtures';
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
  const answer = await client.until((m) => m.type === 'text_response');
  assert.deepEqual(client.frames.slice(1, 3), [
    { type: 'approval_resolved', session_id: session.id, payload: { request_id: id, turn_id: 'turn_1', tool_name: 'reboot', status: 'approved' } },
    { type: 'tool_result', session_id: session.id, payload: { turn_id: 'turn_1', call_id: id, name: 'reboot', status: 'ok', summary: 'rebooting in 3s' } },
  ]);
  const started = client.frames[3]!;
  assert.ok(started.type === 'turn_started' && answer.type === 'text_response');
  const note = `[approval] You approved reboot (approval request ${id}); it ran: rebooting in 3s`;
  assert.deepEqual(started.payload, { turn_id: answer.payload.turn_id, text: note, specialist: 'general', continues: 'turn_1' });
  assert.equal(answer.payload.text, 'rebooting in 3s', 'the local model answers with the outcome it was handed');
  for (const frame of client.frames) assert.ok(Value.Check(BrainMessage, frame), frame.type);
  assert.deepEqual(bystander.frames, [], 'another session hears nothing');
  assert.deepEqual(session.messages().slice(-2), [
    { role: 'user', content: note },
    { role: 'assistant', content: 'rebooting in 3s' },
  ]);
  assert.equal(other.messages().length, 0);
  assert.equal(await denials(rig), '0', 'an approval is not a denial');
  assert.deepEqual(rig.runs, [{ delay: 3 }], 'the continuation does not run the tool again');
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
  const answer = await client.until((m) => m.type === 'text_response');
  assert.deepEqual(client.types().slice(0, 3), ['approval_requested', 'approval_resolved', 'turn_started']);
  assert.deepEqual(client.frames[1], { type: 'approval_resolved', session_id: session.id, payload: { request_id: id, turn_id: 'turn_1', tool_name: 'reboot', status: 'rejected' } });
  assert.ok(answer.type === 'text_response');
  assert.match(answer.payload.text, /the user rejected this call/);
  assert.deepEqual(rig.runs, []);
  assert.equal(await denials(rig), '1');
  assert.deepEqual(session.messages().at(-2), { role: 'user', content: `[approval] You rejected reboot (approval request ${id}); it did not run.` });
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

void test('the agent scrubs vault secrets from held args and the approved summary before clients or the conversation see them', async () => {
  const bus = new EventBus<BrainEvent>((_owner, err) => { throw err; });
  const { agent } = makeAgent(new ScriptedProvider([() => say('hi')]), { bus, secrets: ['hunter2-secret-value'] });
  const session = agent.sessions.open();
  const client = new RecordingClient();
  agent.sessions.attach(session, client);
  bus.emit({ type: 'approval_requested', category: 'approval', priority: 'high', requestId: 'apr_1', sessionId: session.id, turnId: 'turn_1', tool: 'run_command', safety: 'privileged', args: { argv: ['login', 'hunter2-secret-value'] }, createdAt: 1_700_000_000.5, at: 1 });
  bus.emit({ type: 'approval_resolved', requestId: 'apr_1', sessionId: session.id, turnId: 'turn_1', tool: 'run_command', args: { argv: ['login', 'hunter2-secret-value'] }, status: 'approved', result: { status: 'error', summary: 'exit 1: bad password hunter2-secret-value', data: { stdout: 'hunter2-secret-value' } }, at: 2 });
  await client.until((m) => m.type === 'text_response');
  assert.deepEqual(client.types().slice(0, 4), ['approval_requested', 'approval_resolved', 'tool_result', 'turn_started']);
  const seen = JSON.stringify(client.frames) + JSON.stringify(session.messages());
  assert.ok(!seen.includes('hunter2-secret-value'), seen);
  assert.match(String(session.messages().at(-2)?.content), /^\[approval\] You approved run_command \(approval request apr_1\); it failed: exit 1: bad password /);
});

void test('the continuation hands the model the held call and its outcome, runs behind a running turn, and is noted when the queue is full', async () => {
  const bus = new EventBus<BrainEvent>((_owner, err) => { throw err; });
  const [entered, gate] = [deferred(), deferred()];
  // The first turn waits at the gate; a continuation (its request ends with the tool message) is answered; the rest is knowledge extraction.
  const provider = new ScriptedProvider([
    async () => (entered.resolve(), await gate.promise, say('first answer')),
    (request) => say(request.messages.at(-1)?.role === 'tool' ? 'The listing is ready.' : '{"triples":[]}'),
  ]);
  const { agent } = makeAgent(provider, { bus, settings: { max_queued_turns: 2 } });
  const session = agent.sessions.open();
  const client = new RecordingClient();
  agent.sessions.attach(session, client);
  const first = agent.sessions.submit(session, 'list my files', 'turn_a');
  await entered.promise;
  const resolved = { type: 'approval_resolved', requestId: 'apr_7', sessionId: session.id, turnId: 'turn_0', tool: 'list_directory', args: { path: '/srv' }, status: 'approved', result: { status: 'ok', summary: '2 entries', data: { entries: ['a', 'b'] } }, at: 2 } as const;
  bus.emit(resolved);
  assert.equal(provider.requests.length, 1, 'the continuation waits for the running turn');
  gate.resolve();
  await first;
  const answer = await client.until((m) => m.type === 'text_response' && m.payload.turn_id !== 'turn_a');
  assert.ok(answer.type === 'text_response');
  assert.equal(answer.payload.text, 'The listing is ready.');
  const continued = provider.requests.filter((r) => r.messages.at(-1)?.role === 'tool');
  assert.equal(continued.length, 1);
  const tail = continued[0]!.messages.slice(-2);
  assert.deepEqual(tail, [
    { role: 'assistant', content: '', tool_calls: [{ id: 'apr_7', name: 'list_directory', arguments: { path: '/srv' } }] },
    { role: 'tool', tool_call_id: 'apr_7', name: 'list_directory', content: JSON.stringify({ status: 'ok', summary: '2 entries', data: { entries: ['a', 'b'] } }) },
  ]);
  assert.ok(continued[0]!.messages.some((m) => m.role === 'user' && m.content === 'list my files'), 'the conversation so far is in the request');

  // A full queue: two turns already waiting; the outcome becomes a line of the conversation.
  const blocker = deferred();
  const slow = new ScriptedProvider([async () => (await blocker.promise, say('slow'))]);
  const { agent: busy } = makeAgent(slow, { bus: new EventBus<BrainEvent>((_o, err) => { throw err; }), settings: { max_queued_turns: 2 } });
  const s2 = busy.sessions.open();
  const turns = [busy.sessions.submit(s2, 'one', 't1'), busy.sessions.submit(s2, 'two', 't2')];
  busy.sessions.approval({ ...resolved, sessionId: s2.id, status: 'rejected' });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(s2.messages().at(-1), { role: 'assistant', content: '[approval] You rejected list_directory (approval request apr_7); it did not run.' });
  blocker.resolve();
  await Promise.all(turns);
  assert.ok(!slow.requests.some((r) => r.messages.at(-1)?.role === 'tool'), 'no continuation was queued');
});
