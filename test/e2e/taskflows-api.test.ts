// TaskFlows on the built brain (issue 12): /api/taskflows create → list → show → cancel → a second
// cancel is 409 with the status; a bad step is a 400 naming the step and field; every bad limit is a
// 400; `svc flows` list/show/cancel/resume against the same brain with its exit codes; and the agent
// (a scripted model on the fake OpenAI server) starts a flow with start_taskflow that the chat sees:
// the tool_result, the card and the flow's taskflow_update frames up to completed; after a kill -9
// mid-step, `svc flows resume` needs --retry or --skip, and each does what it says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, watch, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SVC, startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import { connect, waitForFrame } from '../helpers/session-client';
import { startOpenAiServer, type FakeReply } from '../fakes/openai-server';
import type { BrainMessage, BrainMessageOf } from '../../protocol/session';
import type { Taskflow, TaskflowList } from '../../protocol/taskflows';
import { createFlow, effectLines, effectStep, flowsBrain, getFlow } from './taskflows-rig';

type ErrorBody = { error: { code: string; message: string; details: Record<string, unknown> | null } };

async function call<T>(brain: BrainProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const r = await brain.api(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) });
  return { status: r.status, body: (await r.json()) as T };
}

const svc = (brain: BrainProcess, ...args: string[]) =>
  spawnSync(process.execPath, [SVC, ...args, '--url', brain.url], { env: { ...process.env, SVC_HOME: brain.home, SVC_API_TOKEN: brain.token }, encoding: 'utf8', timeout: 20_000 });

// A flow that stays put for an hour at its first step.
const later = { title: 'Water the plants', steps: [{ type: 'wait', seconds: 3600 }, { type: 'note', text: 'plants watered' }] };

void test('the API: create, list, show, cancel once; a second cancel is 409 with the status; bad steps and limits are 400', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());

  const created = await call<Taskflow>(brain, 'POST', '/api/taskflows', { ...later, session_id: 'garden' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id;
  assert.deepEqual(created.body.steps.map((s) => s.type), ['wait', 'note']);

  const listed = await call<TaskflowList>(brain, 'GET', '/api/taskflows?session_id=garden');
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.body.taskflows.map((f) => [f.id, f.title]), [[id, 'Water the plants']]);

  const shown = await call<Taskflow>(brain, 'GET', `/api/taskflows/${id}`);
  assert.equal(shown.status, 200);
  assert.equal(shown.body.history[0]!.to, 'queued');
  assert.equal(shown.body.steps.length, 2);

  const cancelled = await call<Taskflow>(brain, 'POST', `/api/taskflows/${id}/cancel`, { reason: 'rain' });
  assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
  assert.equal(cancelled.body.status, 'cancelled');
  const again = await call<ErrorBody>(brain, 'POST', `/api/taskflows/${id}/cancel`);
  assert.equal(again.status, 409);
  assert.equal(again.body.error.code, 'CONFLICT');
  assert.equal(again.body.error.details?.status, 'cancelled');
  assert.equal((await call<Taskflow>(brain, 'GET', `/api/taskflows/${id}`)).body.status, 'cancelled', 'the 409 changed nothing');

  const bad = await call<ErrorBody>(brain, 'POST', '/api/taskflows', { title: 'Bad', steps: [{ type: 'note', text: 'fine' }, { type: 'wait', seconds: 5 }, { type: 'tool', tool: '' }] });
  assert.equal(bad.status, 400, JSON.stringify(bad.body));
  assert.equal(bad.body.error.code, 'BAD_REQUEST');
  assert.equal(bad.body.error.details?.step, 2);
  assert.equal(bad.body.error.details?.field, 'tool');
  assert.match(bad.body.error.message, /step 2/);

  for (const limit of ['0', '501', '-1', '1.5', 'ten', '', '1e309', 'Infinity', 'NaN', '0x10']) {
    const r = await call<ErrorBody>(brain, 'GET', `/api/taskflows?limit=${encodeURIComponent(limit)}`);
    assert.equal(r.status, 400, `limit=${limit}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error.code, 'BAD_REQUEST');
  }
  assert.equal((await call<TaskflowList>(brain, 'GET', '/api/taskflows?limit=500')).body.count, 1, 'the refused flow was not stored');
  assert.equal((await call<ErrorBody>(brain, 'GET', '/api/taskflows/flw_none')).status, 404);
});

void test('svc flows against the built brain: list, show, cancel, and the exit codes of refusals and bad usage', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());

  const empty = svc(brain, 'flows');
  assert.equal(empty.status, 0, empty.stderr);
  assert.equal(empty.stdout, 'no taskflows\n');
  const id = (await call<Taskflow>(brain, 'POST', '/api/taskflows', later)).body.id;

  const list = svc(brain, 'flows', 'list', '--session', 'dashboard', '--limit', '5');
  assert.equal(list.status, 0, list.stderr);
  const [head, row, ...rest] = list.stdout.trimEnd().split('\n');
  assert.match(head!, /^ID\s+STATUS\s+STEP\s+UPDATED\s+SESSION\s+TITLE$/);
  assert.match(row!, new RegExp(`^${id}\\s+(queued|running|waiting)\\s+\\S+\\s+\\d\\d:\\d\\d:\\d\\d\\s+dashboard\\s+Water the plants$`));
  assert.deepEqual(rest, []);
  assert.deepEqual((JSON.parse(svc(brain, 'flows', '--json').stdout) as { id: string }[]).map((f) => f.id), [id]);

  const show = svc(brain, 'flows', 'show', id);
  assert.equal(show.status, 0, show.stderr);
  assert.match(show.stdout, new RegExp(`^${id}  Water the plants\\n  status \\w+`));
  // The timeline: each step, then one line per status change it has had (a pending step has none yet).
  assert.match(show.stdout, /\n\n0 {2}wait 3600s {2}\w+\n(?: {5}\d\d:\d\d:\d\d {2}\S+ → \S+ {2}[^\n]+\n)*1 {2}note {2}pending\n$/);
  assert.equal((JSON.parse(svc(brain, 'flows', 'show', id, '--json').stdout) as Taskflow).id, id);

  const cancel = svc(brain, 'flows', 'cancel', id);
  assert.equal(cancel.status, 0, cancel.stderr);
  assert.match(cancel.stdout, new RegExp(`^${id} 'Water the plants' is cancelled( at step 0)?\\n$`));
  for (const refused of [['flows', 'cancel', id], ['flows', 'resume', id, '--retry'], ['flows', 'show', 'flw_none'], ['flows', 'wait', id, '--until', '2030-01-01T00:00:00Z']]) {
    const r = svc(brain, ...refused);
    assert.equal(r.status, 1, `${refused.join(' ')}: ${r.stdout}`);
    assert.match(r.stderr, /^svc: [^\n]+\n$/, 'one line');
  }
  for (const usage of [['flows', 'show'], ['flows', 'cancel'], ['flows', '--status', 'done'], ['flows', 'list', '--limit', '0'], ['flows', 'resume', id, '--retry', '--skip']]) {
    const r = svc(brain, ...usage);
    assert.equal(r.status, 2, `${usage.join(' ')}: ${r.stdout}${r.stderr}`);
  }
  assert.equal(svc(brain, 'flows', 'list', '--status', 'cancelled').stdout.split('\n').length, 3, 'header and the one cancelled flow');
});

void test('the agent starts a flow with start_taskflow and the chat sees it run to completion', async (t) => {
  const fake = await startOpenAiServer();
  const home = tempHome('svc-taskflows-e2e-');
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ providers: { chain: [{ id: 'openai', kind: 'openai', base_url: fake.baseURL, keyless: true }] } }));
  const brain = await startBrain({ home });
  t.after(async () => {
    await brain.stop();
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  });
  const flowArgs = { title: 'Remember the milk', steps: [{ type: 'note', text: 'buy milk on the way home' }] };
  fake.reply((req): FakeReply => {
    const messages = (req.body?.messages ?? []) as { role: string; content?: unknown }[];
    if (messages[0]?.role === 'system' && String(messages[0].content).startsWith('Extract the facts')) return { kind: 'text', chunks: ['{"triples":[]}'] };
    const last = messages.at(-1);
    if (last?.role === 'user' && last.content === 'remind me about the milk') return { kind: 'tool_calls', calls: [{ id: 'call_1', name: 'start_taskflow', argumentChunks: [JSON.stringify(flowArgs)] }] };
    if (last?.role === 'tool') return { kind: 'text', chunks: ['I started a flow for that.'] };
    return { kind: 'text', chunks: ['Hello from fake'] };
  });

  const { ws, frames } = await connect(brain);
  t.after(() => ws.close());
  const waitFor = <T extends BrainMessage['type']>(type: T, match?: (m: BrainMessageOf<T>) => boolean): Promise<BrainMessageOf<T>> => waitForFrame(ws, frames, type, match);
  ws.send(JSON.stringify({ type: 'text_command', session_id: '', payload: { text: 'remind me about the milk' } }));

  const result = await waitFor('tool_result', (m) => m.payload.name === 'start_taskflow');
  assert.equal(result.payload.status, 'ok', result.payload.summary);
  const started = /^started flow (\S+) 'Remember the milk' \(1 step\)$/.exec(result.payload.summary);
  assert.ok(started, result.payload.summary);
  const id = started[1]!;
  const card = await waitFor('sdui_payload', (m) => m.payload.component.id === `taskflow-${id}`);
  assert.equal(card.payload.component.template, 'card');
  const done = await waitFor('taskflow_update', (m) => m.payload.flow_id === id && m.payload.status === 'completed');
  assert.equal(done.session_id, result.session_id, 'the flow reports to the chat that started it');
  assert.equal((await waitFor('text_response')).payload.text, 'I started a flow for that.');

  const flow = (await call<Taskflow>(brain, 'GET', `/api/taskflows/${id}`)).body;
  assert.equal(flow.session_id, result.session_id);
  assert.equal(flow.status, 'completed');
  assert.deepEqual(flow.steps.map((s) => s.status), ['succeeded']);
  const updates = frames.filter((f): f is BrainMessageOf<'taskflow_update'> => f.type === 'taskflow_update' && f.payload.flow_id === id).map((f) => f.payload.status);
  assert.deepEqual([updates[0], updates.at(-1)], ['queued', 'completed'], updates.join(' '));
});

/** Resolves once the effect log holds `tag` `times` times (fs.watch on its folder, not a timer). */
function effectRan(log: string, tag: string, times = 1): Promise<void> {
  const done = () => effectLines(log).filter((l) => l === tag).length >= times;
  return new Promise((resolve) => {
    const watcher = watch(dirname(log), () => {
      if (!done()) return;
      watcher.close();
      resolve();
    });
    if (done()) {
      watcher.close();
      resolve();
    }
  });
}

void test('after a kill -9 mid-step, svc flows resume needs --retry or --skip: skip moves past the step, retry runs it again', async (t) => {
  const rig = await flowsBrain(t);
  const flows: Record<'skip' | 'retry', Taskflow> = {
    skip: await createFlow(rig.brain, { title: 'Skip it', steps: [effectStep(rig.work, rig.log, 'skipme', 0, 120), { type: 'wait', seconds: 3600 }] }),
    retry: await createFlow(rig.brain, { title: 'Retry it', steps: [effectStep(rig.work, rig.log, 'retryme', 0, 120), { type: 'wait', seconds: 3600 }] }),
  };
  await Promise.all([effectRan(rig.log, 'skipme'), effectRan(rig.log, 'retryme')]);
  await rig.crash();

  const { skip, retry } = flows;
  const show = svc(rig.brain, 'flows', 'show', skip.id);
  assert.equal(show.status, 0, show.stderr);
  assert.match(show.stdout, /^ {2}status waiting at step 0,/m);
  assert.match(show.stdout, /\n0 {2}tool run_command {2}unknown\n/);
  assert.match(show.stdout, / running → unknown {2}the brain stopped while this step ran/);

  const undecided = svc(rig.brain, 'flows', 'resume', skip.id);
  assert.equal(undecided.status, 1, undecided.stdout);
  assert.match(undecided.stderr, /^svc: [^\n]*retry[^\n]*skip[^\n]*\n$/);
  assert.equal((await getFlow(rig.brain, skip.id)).steps[0]!.status, 'unknown', 'a refused resume changes nothing');

  const skipped = svc(rig.brain, 'flows', 'resume', skip.id, '--skip');
  assert.equal(skipped.status, 0, skipped.stderr);
  assert.match(skipped.stdout, new RegExp(`^${skip.id} 'Skip it' is (queued|running|waiting)`));
  const afterSkip = await getFlow(rig.brain, skip.id);
  assert.equal(afterSkip.steps[0]!.status, 'skipped');
  assert.deepEqual([afterSkip.steps[0]!.history.at(-1)!.from, afterSkip.steps[0]!.history.at(-1)!.to], ['unknown', 'skipped']);

  const retried = svc(rig.brain, 'flows', 'resume', retry.id, '--retry');
  assert.equal(retried.status, 0, retried.stderr);
  await effectRan(rig.log, 'retryme', 2);
  assert.equal(rig.ran('skipme'), 1, 'the skipped step never ran again');
  const afterRetry = await getFlow(rig.brain, retry.id);
  assert.ok(afterRetry.steps[0]!.history.some((h) => h.from === 'unknown' && h.to === 'pending'), JSON.stringify(afterRetry.steps[0]!.history));
});
