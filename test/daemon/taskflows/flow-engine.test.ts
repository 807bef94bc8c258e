// The TaskFlow engine on a real store file and real tools (engine-rig.ts): steps of every type run in
// order with templates resolved and a timeline kept; branches skip and loop a bounded number of times;
// a held tool waits for its approval and never runs without it; waits end on time or on a bus event;
// at most max_running flows run; cancel, pause and resume follow the state machine (409 otherwise);
// after a crash a read-only step runs again, an effectful one becomes unknown and waits for a person.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../daemon/kernel/errors';
import type { CreateTaskflow, Taskflow } from '../../../protocol/taskflows';
import { engineRig, holding, type EngineRig } from './engine-rig';
import { deferred } from '../agent/agent-fixtures';

const flow = (steps: CreateTaskflow['steps'], extra: Partial<CreateTaskflow> = {}): CreateTaskflow => ({ title: 'test flow', steps, ...extra });

const refused = async (p: Promise<unknown>, status: number, code: string): Promise<AppError> => {
  const err = await p.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof AppError, String(err));
  assert.equal(err.status, status, err.message);
  assert.equal(err.code, code);
  return err;
};

/** Every status change of the flow and its steps is a legal transition, in time order, ending in the current status. */
function consistent(f: Taskflow): void {
  const check = (history: Taskflow['history'], now: string): void => {
    assert.ok(history.length > 0 || now === 'pending', 'a timeline');
    for (let i = 1; i < history.length; i++) {
      assert.equal(history[i]!.from, history[i - 1]!.to, `history continues: ${JSON.stringify(history)}`);
      assert.ok(history[i]!.at >= history[i - 1]!.at);
    }
    if (history.length > 0) assert.equal(history.at(-1)!.to, now);
  };
  check(f.history, f.status);
  for (const s of f.steps) check(s.history, s.status);
}

void test('a flow of tool, branch, note and prompt steps runs in order, resolves references, and keeps a timeline', async (t) => {
  const rig = await engineRig(t);
  const created = await rig.engine.create(
    flow(
      [
        { type: 'tool', tool: 'read_temp' },
        { type: 'branch', if: { ref: '{{steps.0.result.temp}}', op: 'ge', value: 18 }, goto: 3 },
        { type: 'tool', tool: 'append_line', args: { line: 'cold: {{steps.0.result.temp}} in {{context.room}}' } },
        { type: 'note', text: 'The {{context.room}} was at {{steps.0.result.temp}} °C' },
        { type: 'prompt', text: 'Tell me about {{steps.0.result.summary}}' },
      ],
      { context: { room: 'hall' }, session_id: 'ses_a' },
    ),
    {},
  );
  assert.equal(created.status, 'queued');
  assert.equal(created.session_id, 'ses_a');
  const done = await rig.until(created.id, 'completed', 'failed');
  assert.equal(done.status, 'completed', JSON.stringify(done));
  assert.deepEqual(
    done.steps.map((s) => s.status),
    ['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded'],
  );
  assert.deepEqual(done.steps[0]!.result, { temp: 17, summary: '17 °C' });
  assert.deepEqual(done.steps[1]!.result, { taken: false });
  assert.deepEqual(rig.lines(), ['cold: 17 in hall']);
  assert.deepEqual(rig.notes, ['The hall was at 17 °C']);
  assert.deepEqual(rig.prompts, [{ sessionId: 'ses_a', text: 'Tell me about 17 °C', tools: false }]);
  assert.deepEqual(done.steps[4]!.result, { text: 'answer to Tell me about 17 °C', session_id: 'ses_a' });
  assert.deepEqual(
    done.history.map((h) => h.to),
    ['queued', 'running', 'completed'],
  );
  assert.deepEqual(
    done.steps[2]!.history.map((h) => [h.from, h.to]),
    [
      ['pending', 'running'],
      ['running', 'succeeded'],
    ],
  );
  consistent(done);
  assert.ok(rig.events.some((e) => e.flowId === created.id && e.status === 'completed' && e.sessionId === 'ses_a'));
});

void test('a branch skips forward when its condition holds, and loops back at most max_loops times', async (t) => {
  const rig = await engineRig(t);
  rig.temp.value = 21;
  const skip = await rig.engine.create(
    flow([
      { type: 'tool', tool: 'read_temp' },
      { type: 'branch', if: { ref: '{{steps.0.result.temp}}', op: 'gt', value: 20 }, goto: 3 },
      { type: 'tool', tool: 'append_line', args: { line: 'never' } },
      { type: 'tool', tool: 'append_line', args: { line: 'warm' } },
    ]),
    {},
  );
  const skipped = await rig.until(skip.id, 'completed', 'failed');
  assert.deepEqual(
    skipped.steps.map((s) => s.status),
    ['succeeded', 'succeeded', 'skipped', 'succeeded'],
  );
  assert.deepEqual(rig.lines(), ['warm']);

  const loop = await rig.engine.create(
    flow([
      { type: 'tool', tool: 'append_line', args: { line: 'tick' } },
      { type: 'branch', if: { ref: '{{steps.0.status}}', op: 'eq', value: 'succeeded' }, goto: 0, max_loops: 2 },
      { type: 'tool', tool: 'append_line', args: { line: 'end' } },
    ]),
    {},
  );
  const looped = await rig.until(loop.id, 'completed', 'failed');
  assert.equal(looped.status, 'completed');
  assert.deepEqual(rig.lines(), ['warm', 'tick', 'tick', 'tick', 'end'], 'the first run and two loops');
  assert.match(looped.steps[1]!.history.at(-1)!.reason, /loop limit of 2 reached/);
  consistent(looped);
});

void test('a held tool waits for its approval: approved it records the result and goes on, rejected the flow fails; it never runs by itself', async (t) => {
  const rig = await engineRig(t);
  const held: { id: string; tool: string }[] = [];
  rig.permissions.use('test', holding(['reboot', 'append_line'], held));
  const f = await rig.engine.create(flow([{ type: 'tool', tool: 'reboot' }, { type: 'tool', tool: 'read_temp' }]), { sessionId: 'ses_h' });
  const waiting = await rig.until(f.id, 'waiting');
  assert.equal(waiting.steps[0]!.status, 'waiting');
  assert.equal(waiting.steps[0]!.approval_request_id, 'apr_1');
  await refused(rig.engine.resume(f.id), 409, 'CONFLICT');
  rig.bus.emit({ type: 'approval_resolved', requestId: 'apr_1', sessionId: 'ses_h', turnId: `taskflow:${f.id}:0`, tool: 'reboot', args: {}, status: 'approved', result: { status: 'ok', summary: 'rebooting', data: { in: 5 } }, at: 1 });
  const done = await rig.until(f.id, 'completed', 'failed');
  assert.equal(done.status, 'completed');
  assert.deepEqual(done.steps[0]!.result, { in: 5, summary: 'rebooting' });

  const g = await rig.engine.create(flow([{ type: 'tool', tool: 'append_line', args: { line: 'held' } }]), {});
  await rig.until(g.id, 'waiting');
  rig.bus.emit({ type: 'approval_resolved', requestId: 'apr_2', sessionId: 'dashboard', turnId: `taskflow:${g.id}:0`, tool: 'append_line', args: { line: 'held' }, status: 'rejected', at: 2 });
  const failed = await rig.until(g.id, 'failed');
  assert.match(failed.error ?? '', /apr_2 was rejected/);
  assert.deepEqual(rig.lines(), [], 'a held call runs only through its approval');
});

void test('waits end at their time or on a matching bus event; an event wait times out; a pause waits for resume', async (t) => {
  const rig = await engineRig(t);
  const timed = await rig.engine.create(flow([{ type: 'wait', seconds: 0.05 }, { type: 'tool', tool: 'append_line', args: { line: 'after wait' } }]), {});
  const done = await rig.until(timed.id, 'completed');
  assert.equal((done.steps[0]!.result as { waited_until: number }).waited_until > 0, true);
  assert.deepEqual(rig.lines(), ['after wait']);

  const evented = await rig.engine.create(flow([{ type: 'wait', event: { type: 'memory_changed', match: { tier: 'note' } } }, { type: 'tool', tool: 'read_temp' }]), {});
  await rig.until(evented.id, 'waiting');
  rig.bus.emit({ type: 'memory_changed', kind: 'upsert', tier: 'episode', id: 'ep_1', revision: 1 });
  assert.equal(rig.store.get(evented.id)!.status, 'waiting', 'a non-matching event is not it');
  rig.bus.emit({ type: 'memory_changed', kind: 'upsert', tier: 'note', id: 'note_9', text: 'hello', revision: 2 });
  const got = await rig.until(evented.id, 'completed');
  assert.deepEqual(got.steps[0]!.result, { type: 'memory_changed', kind: 'upsert', tier: 'note', id: 'note_9', text: 'hello', revision: 2 });

  const lonely = await rig.engine.create(flow([{ type: 'wait', event: { type: 'turn_finished' }, timeout_seconds: 1 }]), {});
  const timedOut = await rig.until(lonely.id, 'failed');
  assert.match(timedOut.error ?? '', /no turn_finished event came in time/);

  const gate = await rig.engine.create(flow([{ type: 'wait', seconds: 3600 }, { type: 'tool', tool: 'append_line', args: { line: 'resumed' } }]), {});
  await rig.until(gate.id, 'waiting');
  await rig.engine.resume(gate.id);
  const resumed = await rig.until(gate.id, 'completed');
  assert.deepEqual(resumed.steps[0]!.result && Object.keys(resumed.steps[0]!.result), ['resumed', 'at']);
  assert.deepEqual(rig.lines(), ['after wait', 'resumed']);
});

void test('at most max_running flows run at once; the rest queue and start as others finish', async (t) => {
  const gates = [deferred<string>(), deferred<string>(), deferred<string>()];
  let calls = 0;
  const rig = await engineRig(t, { max_running: 2, answer: () => gates[calls++]!.promise });
  const ids = await Promise.all([0, 1, 2].map(async (i) => (await rig.engine.create(flow([{ type: 'prompt', text: `flow ${i}` }]), {})).id));
  await rig.until(ids[1]!, 'running');
  await new Promise((r) => setImmediate(r));
  assert.equal(rig.engine.running(), 2);
  assert.equal(rig.store.get(ids[2]!)!.status, 'queued', 'the newest waits (oldest first)');
  gates[0]!.resolve('one');
  await rig.until(ids[0]!, 'completed');
  gates[1]!.resolve('two');
  gates[2]!.resolve('three');
  for (const id of ids) assert.equal((await rig.until(id, 'completed')).status, 'completed');
  assert.deepEqual(
    rig.prompts.map((p) => p.text),
    ['flow 0', 'flow 1', 'flow 2'],
  );
});

void test('cancel, pause and resume follow the state machine: a final flow is never overwritten (409 with its status)', async (t) => {
  const rig = await engineRig(t);
  const f = await rig.engine.create(flow([{ type: 'wait', seconds: 3600 }]), {});
  await rig.until(f.id, 'waiting');
  const cancelled = await rig.engine.cancel(f.id, 'changed my mind');
  assert.equal(cancelled.status, 'cancelled');
  assert.equal(cancelled.steps[0]!.status, 'skipped');
  const again = await refused(rig.engine.cancel(f.id), 409, 'CONFLICT');
  assert.deepEqual(again.details, { status: 'cancelled' });
  await refused(rig.engine.resume(f.id), 409, 'CONFLICT');

  const g = await rig.engine.create(flow([{ type: 'tool', tool: 'read_temp' }]), {});
  await rig.until(g.id, 'completed');
  assert.deepEqual((await refused(rig.engine.cancel(g.id), 409, 'CONFLICT')).details, { status: 'completed' });
  await refused(rig.engine.wait(g.id), 409, 'CONFLICT');
  await refused(rig.engine.cancel('flw_missing'), 404, 'NOT_FOUND');

  const failing = await rig.engine.create(flow([{ type: 'tool', tool: 'append_line', args: { line: 'fail' } }, { type: 'tool', tool: 'append_line', args: { line: 'after skip' } }]), {});
  const failed = await rig.until(failing.id, 'failed');
  assert.equal(failed.steps[0]!.error, 'asked to fail');
  assert.deepEqual((await refused(rig.engine.cancel(failing.id), 409, 'CONFLICT')).details, { status: 'failed' });
  await rig.engine.resume(failing.id, 'skip');
  const skipped = await rig.until(failing.id, 'completed');
  assert.deepEqual(
    skipped.steps.map((s) => s.status),
    ['skipped', 'succeeded'],
  );
  assert.deepEqual(rig.lines(), ['after skip']);
  consistent(skipped);
});

/** Writes the state a kill -9 in the middle of step 0 leaves: the flow and the step marked running. */
async function crashedDuring(rig: EngineRig, steps: CreateTaskflow['steps']): Promise<string> {
  await rig.engine.stop();
  const id = await rig.store.insert({ title: 'crashed', session_id: 'dashboard', steps }, { status: 'queued', waitUntil: null, reason: 'created' });
  await rig.store.apply(id, { flow: { to: 'running', reason: 'started', set: { current_step: 0 } } });
  await rig.store.apply(id, { steps: [{ index: 0, to: 'running', reason: 'started' }] });
  await rig.restart();
  return id;
}

void test('after a crash an effectful running step becomes unknown and waits for retry or skip; a read-only one runs again', async (t) => {
  const rig = await engineRig(t);
  const effectful = await crashedDuring(rig, [{ type: 'tool', tool: 'append_line', args: { line: 'maybe twice' } }]);
  const waiting = await rig.until(effectful, 'waiting');
  assert.equal(waiting.steps[0]!.status, 'unknown');
  assert.match(waiting.history.at(-1)!.reason, /resume with retry or skip/);
  assert.deepEqual(rig.lines(), [], 'not replayed');
  const e = await refused(rig.engine.resume(effectful), 400, 'BAD_REQUEST');
  assert.deepEqual(e.details, { step: 0, field: 'decision' });
  await rig.engine.resume(effectful, 'retry');
  assert.equal((await rig.until(effectful, 'completed')).status, 'completed');
  assert.deepEqual(rig.lines(), ['maybe twice']);

  const readOnly = await crashedDuring(rig, [{ type: 'tool', tool: 'read_temp' }, { type: 'prompt', text: 'hi' }]);
  const rerun = await rig.until(readOnly, 'completed');
  assert.deepEqual(
    rerun.steps[0]!.history.map((h) => h.to),
    ['running', 'pending', 'running', 'succeeded'],
  );
  consistent(rerun);
});

void test('a wait whose time passed while the brain was down fires once after start-up', async (t) => {
  const rig = await engineRig(t);
  const f = await rig.engine.create(flow([{ type: 'wait', seconds: 0.2 }, { type: 'tool', tool: 'append_line', args: { line: 'once' } }]), {});
  await rig.until(f.id, 'waiting');
  await rig.engine.stop();
  await new Promise((r) => setTimeout(r, 300));
  await rig.restart();
  await rig.until(f.id, 'completed');
  assert.deepEqual(rig.lines(), ['once']);
});

void test('a scheduled flow waits for its occurrences and queues a run at each; cancelling it ends the schedule', async (t) => {
  const rig = await engineRig(t);
  const parent = await rig.engine.create(flow([{ type: 'tool', tool: 'append_line', args: { line: 'run of {{flow.id}}' } }], { schedule: '* * * * * *' }), {});
  assert.equal(parent.status, 'waiting');
  assert.ok(parent.wait_until !== null);
  const run = await new Promise<string>((resolve) => {
    const look = (): void => {
      const hit = rig.events.find((e) => e.reason.startsWith('run of scheduled flow'));
      if (hit) return resolve(hit.flowId);
      setTimeout(look, 50);
    };
    look();
  });
  const done = await rig.until(run, 'completed');
  assert.equal(done.parent_id, parent.id);
  assert.deepEqual(rig.lines()[0], `run of ${run}`);
  await rig.engine.cancel(parent.id);
  assert.equal(rig.store.get(parent.id)!.status, 'cancelled');
});

void test('bad flows are refused with the step index and the field', async (t) => {
  const rig = await engineRig(t);
  const cases: [CreateTaskflow['steps'], number, string][] = [
    [[{ type: 'tool', tool: 'no_such_tool' }], 0, 'tool'],
    [[{ type: 'tool', tool: 'read_temp' }, { type: 'tool', tool: 'append_line', args: { line: 5 } }], 1, 'args'],
    [[{ type: 'wait' }], 0, 'until'],
    [[{ type: 'wait', seconds: 1, event: { type: 'x' } }], 0, 'until'],
    [[{ type: 'wait', until: '2026-11-25 07:00' }], 0, 'until'],
    [[{ type: 'branch', if: { ref: '{{steps.0.result}}', op: 'truthy' }, goto: 1 }], 0, 'if.ref'],
    [[{ type: 'tool', tool: 'read_temp' }, { type: 'branch', if: { ref: '{{steps.0.result}}', op: 'truthy' }, goto: 0 }], 1, 'max_loops'],
    [[{ type: 'tool', tool: 'read_temp' }, { type: 'branch', if: { ref: '{{steps.0.result}}', op: 'truthy' }, goto: 9 }], 1, 'goto'],
    [[{ type: 'note', text: 'from {{steps.1.result}}' }, { type: 'tool', tool: 'read_temp' }], 0, 'text'],
    [[{ type: 'note', text: 'bad {{constructor.name}}' }], 0, 'text'],
    [[{ type: 'tool', tool: 'append_line', args: { line: '{{context.__proto__}}' } }], 0, 'args'],
  ];
  for (const [steps, step, field] of cases) {
    const e = await refused(rig.engine.create(flow(steps), {}), 400, 'BAD_REQUEST');
    assert.deepEqual(e.details, { step, field }, `${JSON.stringify(steps)}: ${e.message}`);
  }
  const bad = await refused(rig.engine.create(flow([{ type: 'tool', tool: 'read_temp' }], { schedule: '61 * * * *' }), {}), 400, 'BAD_REQUEST');
  assert.deepEqual(bad.details, { field: 'schedule' });
  assert.equal(rig.store.list({ limit: 100 }).count, 0, 'nothing was stored');
});

void test('a queued flow whose current step is not pending is settled, never left running: done steps are passed, an unknown one waits for a decision', async (t) => {
  const rig = await engineRig(t);
  await rig.engine.stop();
  const id = await rig.store.insert({ title: 'odd', session_id: 'dashboard', steps: [{ type: 'tool', tool: 'read_temp' }, { type: 'tool', tool: 'append_line', args: { line: 'x' } }, { type: 'tool', tool: 'append_line', args: { line: 'after' } }] }, { status: 'queued', waitUntil: null, reason: 'created' });
  await rig.store.apply(id, { steps: [{ index: 0, to: 'running', reason: 'r' }] });
  await rig.store.apply(id, { steps: [{ index: 0, to: 'succeeded', reason: 's' }, { index: 1, to: 'running', reason: 'r' }] });
  await rig.store.apply(id, { steps: [{ index: 1, to: 'unknown', reason: 'u' }] });
  await rig.restart();
  const waiting = await rig.until(id, 'waiting');
  assert.equal(waiting.current_step, 1);
  assert.match(waiting.history.at(-1)!.reason, /step 1 \(tool\) is unknown: resume with retry or skip/);
  await rig.engine.resume(id, 'skip');
  const done = await rig.until(id, 'completed');
  assert.deepEqual(done.steps.map((s) => s.status), ['succeeded', 'skipped', 'succeeded']);
  assert.deepEqual(rig.lines(), ['after']);
  consistent(done);
});
