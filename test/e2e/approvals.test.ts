// Approvals on the built brain (spec 2.6, 2.7, 3.1, 4.8; docs/approvals.md), black box: the fake
// OpenAI server (real wire format) makes the model call run_command, privileged and so held by the
// default policy; a second client resolves it over plain HTTP on a connection of its own; the command
// appends a line to a file in the granted folder, so the lines count how often it really ran. The
// session's client hears the outcome and the continuation turn the brain runs for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APPROVAL_REQUEST_FIELDS, type BrainMessageOf } from '../../protocol/session';
import type { ApprovalList } from '../../protocol/approvals';
import { CONTINUED, approvalsBrain, approve, envelope, plainRequest, reject, session, type Session } from './approvals-rig';

const SPEC_2_6 = ['args', 'created_at', 'request_id', 'safety_level', 'session_id', 'status', 'tool_name'];

/** The continuation of `held` (issue 11): a new turn that names the one it continues, then its answer. */
async function continuation(s: Session, held: BrainMessageOf<'approval_requested'>, from: number) {
  const started = await s.waitFor('turn_started', (m) => (m.payload as Record<string, unknown>).continues === held.payload.turn_id, from);
  const turnId = started.payload.turn_id;
  assert.notEqual(turnId, held.payload.turn_id, 'a turn of its own');
  assert.match(started.payload.text, /^\[approval\]/);
  const answer = await s.waitFor('text_response', (m) => m.payload.turn_id === turnId, from);
  const deltas = s.frames.slice(from).filter((f): f is BrainMessageOf<'stream_delta'> => f.type === 'stream_delta' && f.payload.turn_id === turnId);
  assert.ok(deltas.length > 0, 'streamed');
  assert.equal(deltas.map((d) => d.payload.text).join(''), answer.payload.text);
  assert.equal(answer.payload.text, CONTINUED);
  return { started, answer };
}

const order = (s: Session, from: number, requestId: string): string[] =>
  s.frames
    .slice(from)
    .filter((f) => f.type !== 'stream_delta' && f.type !== 'telemetry' && f.type !== 'pong')
    .filter((f) => f.type !== 'tool_result' || f.payload.call_id === requestId)
    .map((f) => f.type)
    .slice(0, 5);

void test('approve from a second client: listed with the 2.6 fields, 2.7 answer, ran once, the session hears the outcome and a continuation', { timeout: 60_000 }, async (t) => {
  const rig = await approvalsBrain(t);
  const s = await session(t, rig.brain);
  const { held: [held] } = await s.hold('approveone');
  assert.ok(held);
  assert.equal(held.payload.tool_name, 'run_command');
  assert.equal(held.payload.safety_level, 'privileged');
  assert.equal(held.session_id, s.id);
  const pending = s.frames.find((f): f is BrainMessageOf<'tool_result'> => f.type === 'tool_result' && f.payload.status === 'pending_approval');
  assert.ok(pending, 'the turn told the client the call is pending');
  assert.equal(rig.ran('approveone'), 0, 'held, not run');

  // GET /api/approvals from the second client: exactly the spec 2.6 fields, no turn_id.
  const list = await plainRequest(rig.brain, 'GET', '/api/approvals');
  assert.equal(list.status, 200);
  const { count, approvals } = list.body as ApprovalList;
  assert.equal(count, 1);
  const [item] = approvals;
  assert.ok(item);
  assert.deepEqual(Object.keys(item).sort(), SPEC_2_6);
  assert.deepEqual(Object.keys(APPROVAL_REQUEST_FIELDS).concat('status').sort(), SPEC_2_6);
  assert.deepEqual(item, { request_id: held.payload.request_id, session_id: s.id, tool_name: 'run_command', args: { argv: ['/bin/sh', '-c', 'echo approveone >> runs.log'], cwd: rig.work }, safety_level: 'privileged', created_at: held.payload.created_at, status: 'pending' });
  assert.ok(Math.abs(item.created_at - Date.now() / 1000) < 600, `epoch seconds: ${item.created_at}`);

  const from = s.frames.length;
  const r = await approve(rig.brain, held.payload.request_id);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const body = r.body as Record<string, unknown> & { result: { status: string; summary: string; data: { exit_code: number } } };
  assert.deepEqual(Object.keys(body).sort(), ['request_id', 'result', 'session_id', 'status', 'success', 'summary', 'tool_name']);
  assert.deepEqual({ ...body, result: undefined }, { success: true, status: 'approved', request_id: held.payload.request_id, session_id: s.id, tool_name: 'run_command', summary: '/bin/sh exited with 0', result: undefined });
  assert.equal(body.result.status, 'ok');
  assert.equal(body.result.summary, body.summary);
  assert.equal(body.result.data.exit_code, 0);
  assert.equal(rig.ran('approveone'), 1, 'the tool ran exactly once');

  const resolved = await s.waitFor('approval_resolved', () => true, from);
  assert.deepEqual(resolved.payload, { request_id: held.payload.request_id, turn_id: held.payload.turn_id, tool_name: 'run_command', status: 'approved' });
  const outcome = await s.waitFor('tool_result', (m) => m.payload.call_id === held.payload.request_id, from);
  assert.equal(outcome.payload.status, 'ok');
  assert.equal(outcome.payload.summary, '/bin/sh exited with 0');
  assert.deepEqual((await plainRequest(rig.brain, 'GET', '/api/approvals')).body, { count: 0, approvals: [] });

  // The continuation: a new turn, the model called again with the tool's outcome.
  const { started } = await continuation(s, held, from);
  assert.deepEqual(order(s, from, held.payload.request_id), ['approval_resolved', 'tool_result', 'turn_started', 'text_response']);
  assert.equal(started.payload.specialist, 'general');
  assert.equal(rig.continuations.length, 1);
  assert.match(JSON.stringify(rig.continuations[0]!.body), /\/bin\/sh exited with 0/);
  assert.equal(rig.ran('approveone'), 1, 'the continuation did not run it again');
});

void test('reject: 200 without summary and result, never runs, counted as a denial, the continuation says rejected', { timeout: 60_000 }, async (t) => {
  const rig = await approvalsBrain(t);
  const s = await session(t, rig.brain);
  const denials = async () => Number(/^svc_tool_denials_total\{tool="run_command"\} (\d+)$/m.exec(await (await fetch(`${rig.brain.url}/metrics`)).text())?.[1] ?? 0);
  assert.equal(await denials(), 0);
  const { held: [held] } = await s.hold('rejectone');
  assert.ok(held);
  const from = s.frames.length;
  const r = await reject(rig.brain, held.payload.request_id, { session_id: s.id });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body, { success: true, status: 'rejected', request_id: held.payload.request_id, session_id: s.id, tool_name: 'run_command' });
  const resolved = await s.waitFor('approval_resolved', () => true, from);
  assert.equal(resolved.payload.status, 'rejected');
  assert.equal(await denials(), 1);
  assert.equal((await approve(rig.brain, held.payload.request_id)).status, 404, 'a rejected request cannot be approved after');

  await continuation(s, held, from);
  assert.equal(s.frames.slice(from).filter((f) => f.type === 'tool_result' && f.payload.call_id === held.payload.request_id).length, 0, 'no tool result for a call that never ran');
  assert.match(JSON.stringify(rig.continuations[0]!.body), /rejected/);
  assert.equal(rig.ran('rejectone'), 0, 'the tool never ran');
});

void test('session mismatch is a 409 naming both sessions and leaves the request pending; 404 for unknown and resolved; every bad limit is a 400', { timeout: 60_000 }, async (t) => {
  const rig = await approvalsBrain(t);
  const a = await session(t, rig.brain);
  const b = await session(t, rig.brain);
  const { held: [held] } = await a.hold('mismatch');
  await b.hold('other');
  assert.ok(held);
  const id = held.payload.request_id;
  for (const resolve of [approve, reject]) {
    const r = await resolve(rig.brain, id, { session_id: b.id });
    assert.equal(r.status, 409, JSON.stringify(r.body));
    const e = envelope(r);
    assert.equal(e.code, 'CONFLICT');
    assert.deepEqual(e.details, { reason: 'session_mismatch', request_session_id: a.id, given_session_id: b.id });
    assert.ok(e.message.includes(id), e.message);
  }
  const mine = await plainRequest(rig.brain, 'GET', `/api/approvals?session_id=${encodeURIComponent(a.id)}`);
  assert.deepEqual((mine.body as ApprovalList).approvals.map((x) => [x.request_id, x.status]), [[id, 'pending']], 'unchanged');
  assert.equal(((await plainRequest(rig.brain, 'GET', '/api/approvals')).body as ApprovalList).count, 2);
  assert.equal(rig.ran('mismatch'), 0);

  // 404: never issued, then resolved (by its own session), for both verbs; nothing runs again.
  for (const resolve of [approve, reject]) {
    const r = await resolve(rig.brain, 'never-issued-request');
    assert.equal(r.status, 404);
    assert.equal(envelope(r).code, 'NOT_FOUND');
  }
  assert.equal((await approve(rig.brain, id, { session_id: a.id })).status, 200);
  for (const resolve of [approve, reject]) {
    const r = await resolve(rig.brain, id);
    assert.equal(r.status, 404, JSON.stringify(r.body));
    assert.equal(envelope(r).code, 'NOT_FOUND');
  }
  assert.equal(rig.ran('mismatch'), 1);

  // limit (spec 4.8, 8): an integer 1 to 500; the catalogue's code for a refused input is BAD_REQUEST.
  // Not pinned here: `1e2`, `0x10` and ` 5` are numbers to the brain-wide query-string conversion
  // (daemon/http/request-parsing.ts, docs/api.md "Input rules") and are answered as 100, 16 and 5.
  for (const bad of ['0', '501', '-1', '1.5', 'abc', '', '1e400', 'Infinity', '100abc', ' ']) {
    const r = await plainRequest(rig.brain, 'GET', `/api/approvals?limit=${encodeURIComponent(bad)}`);
    assert.equal(r.status, 400, `limit=${JSON.stringify(bad)}: ${JSON.stringify(r.body)}`);
    const e = envelope(r);
    assert.equal(e.code, 'BAD_REQUEST');
    assert.match(e.message, /limit/);
  }
  const twice = await plainRequest(rig.brain, 'GET', '/api/approvals?limit=1&limit=2');
  assert.equal(twice.status, 400, JSON.stringify(twice.body));
  for (const [limit, count] of [['1', 1], ['500', 1], ['100', 1]] as const) {
    const r = await plainRequest(rig.brain, 'GET', `/api/approvals?limit=${limit}`);
    assert.equal(r.status, 200, `limit=${limit}: ${JSON.stringify(r.body)}`);
    assert.equal((r.body as ApprovalList).count, count);
  }
});

void test('concurrent approvals: of 8 parallel approves exactly one is a 200, the others 404, the command ran once', { timeout: 60_000 }, async (t) => {
  const rig = await approvalsBrain(t);
  const s = await session(t, rig.brain);
  const { held: [held] } = await s.hold('racing');
  assert.ok(held);
  const answers = await Promise.all(Array.from({ length: 8 }, () => approve(rig.brain, held.payload.request_id)));
  assert.deepEqual(answers.map((r) => r.status).sort(), [200, 404, 404, 404, 404, 404, 404, 404], JSON.stringify(answers));
  for (const r of answers.filter((x) => x.status === 404)) assert.equal(envelope(r).code, 'NOT_FOUND');
  assert.equal(rig.ran('racing'), 1);
  // And approve racing reject: one wins.
  const { held: [second] } = await s.hold('mixed');
  assert.ok(second);
  const mixed = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? reject : approve)(rig.brain, second.payload.request_id)));
  assert.equal(mixed.filter((r) => r.status === 200).length, 1, JSON.stringify(mixed));
  assert.ok(mixed.every((r) => r.status === 200 || r.status === 404));
  const winner = mixed.find((r) => r.status === 200)!.body as { status: string };
  assert.equal(rig.ran('mixed'), winner.status === 'approved' ? 1 : 0);
});
