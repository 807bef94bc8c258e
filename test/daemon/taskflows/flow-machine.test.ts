// daemon/taskflows/flow-machine.ts: the tables of allowed transitions, and a property test that drives
// the real engine (engine-rig.ts: a SQLite file, real tools, the bus) through random sequences of
// operations — flows of random steps, cancel, pause, resume with and without a decision, approvals,
// bus events, kills and restarts — and then checks what the store recorded: every timeline is a chain
// of allowed transitions; a completed or cancelled flow never changes afterwards; an effect
// (append_line) happens at most once per step and loop iteration unless a person chose to retry a step
// left unknown by a crash, and only while its step is durably running; no flow is left running or
// queued once the engine is idle; nothing was logged as an error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import fc from 'fast-check';
import { FLOW_STATUSES, STEP_STATUSES, type CreateTaskflow, type FlowStatus, type StepSpec, type StepStatus, type Taskflow } from '../../../protocol/taskflows';
import { canFlow, canStep, FLOW_FINAL, FLOW_LIVE, FLOW_TRANSITIONS, STEP_TRANSITIONS, TransitionError } from '../../../daemon/taskflows/flow-machine';
import { AppError } from '../../../daemon/kernel/errors';
import { engineRig, holding, type EngineRig } from './engine-rig';
import { deferred } from '../agent/agent-fixtures';

// ── The tables ───────────────────────────────────────────────────────────────────────────────────
void test('the flow table: completed and cancelled have no exit, failed only back to queued (a resume); no state follows itself', () => {
  assert.deepEqual(Object.keys(FLOW_TRANSITIONS).sort(), [...FLOW_STATUSES].sort());
  for (const from of FLOW_STATUSES) {
    for (const to of FLOW_STATUSES) assert.equal(canFlow(from, to), FLOW_TRANSITIONS[from].includes(to), `${from} → ${to}`);
    assert.equal(canFlow(from, from), false, `${from} → itself`);
  }
  assert.deepEqual([...FLOW_FINAL].sort(), ['cancelled', 'completed']);
  for (const final of FLOW_FINAL) assert.deepEqual(FLOW_STATUSES.filter((to) => canFlow(final, to)), [], `${final} is final`);
  assert.deepEqual(FLOW_STATUSES.filter((to) => canFlow('failed', to)), ['queued']);
  assert.deepEqual([...FLOW_LIVE].sort(), ['queued', 'running']);
  // Every live or waiting flow can be cancelled; only a running or waiting one completes.
  for (const from of ['queued', 'running', 'waiting'] as const) assert.ok(canFlow(from, 'cancelled'), from);
  assert.deepEqual(FLOW_STATUSES.filter((from) => canFlow(from, 'completed')), ['running', 'waiting']);
  assert.equal(canFlow('queued', 'completed'), false);
  assert.equal(canFlow('failed', 'cancelled'), false);
});

void test('the step table: every status has an entry; succeeded and skipped leave only for pending (a loop); unknown only by a decision', () => {
  assert.deepEqual(Object.keys(STEP_TRANSITIONS).sort(), [...STEP_STATUSES].sort());
  for (const from of STEP_STATUSES) {
    for (const to of STEP_STATUSES) assert.equal(canStep(from, to), STEP_TRANSITIONS[from].includes(to), `${from} → ${to}`);
    assert.equal(canStep(from, from), false, `${from} → itself`);
  }
  assert.deepEqual(STEP_STATUSES.filter((to) => canStep('succeeded', to)), ['pending']);
  assert.deepEqual(STEP_STATUSES.filter((to) => canStep('skipped', to)), ['pending']);
  assert.deepEqual(STEP_STATUSES.filter((to) => canStep('unknown', to)).sort(), ['pending', 'skipped']);
  assert.deepEqual(STEP_STATUSES.filter((from) => canStep(from, 'unknown')), ['running'], 'only a running step can become unknown');
  assert.equal(canStep('pending', 'unknown'), false);
  assert.equal(canStep('succeeded', 'failed'), false);
  const err = new TransitionError('flow', 'completed', 'running');
  assert.equal(err.message, 'a flow that is completed cannot become running');
  assert.equal(err.name, 'TransitionError');
});

// ── Crashes the property found ──────────────────────────────────────────────────────────────────
/** Writes the state a kill -9 leaves when a flow was paused (or cancelled) while its step 0 ran, and restarts. */
async function killedWhile(rig: EngineRig, flow: FlowStatus, steps: CreateTaskflow['steps']): Promise<string> {
  await rig.engine.stop();
  const id = await rig.store.insert({ title: 'killed', session_id: 'dashboard', steps }, { status: 'queued', waitUntil: null, reason: 'created' });
  await rig.store.apply(id, { flow: { to: 'running', reason: 'started', set: { current_step: 0 } } });
  await rig.store.apply(id, { steps: [{ index: 0, to: 'running', reason: 'started' }] });
  await rig.store.apply(id, { flow: { to: flow, reason: flow } });
  await rig.restart();
  return id;
}

void test('a flow paused while its effectful step ran and then killed: the step becomes unknown and a resume needs a decision; it is not run again by itself', { timeout: 30_000 }, async (t) => {
  const rig = await engineRig(t);
  const id = await killedWhile(rig, 'waiting', [{ type: 'tool', tool: 'append_line', args: { line: 'once' } }]);
  const after = rig.store.get(id)!;
  assert.equal(after.status, 'waiting');
  assert.equal(after.steps[0]!.status, 'unknown');
  await assert.rejects(rig.engine.resume(id), (err: unknown) => err instanceof AppError && err.status === 400);
  await rig.engine.resume(id, 'skip');
  assert.equal((await rig.until(id, 'completed', 'failed')).status, 'completed');
  assert.deepEqual(rig.lines(), [], 'the step never ran again without a decision');
  chained(rig.store.get(id)!);

  const resumed = await killedWhile(rig, 'queued', [{ type: 'tool', tool: 'append_line', args: { line: 'once' } }]);
  assert.equal(rig.store.get(resumed)!.status, 'waiting', 'paused and resumed while the step ran: it waits for a decision');
  assert.equal(rig.store.get(resumed)!.steps[0]!.status, 'unknown');
  await rig.engine.resume(resumed, 'retry');
  assert.equal((await rig.until(resumed, 'completed', 'failed')).status, 'completed');
  assert.deepEqual(rig.lines(), ['once'], 'run again only because a person chose retry');

  const readOnly = await killedWhile(rig, 'waiting', [{ type: 'tool', tool: 'read_temp' }]);
  assert.equal(rig.store.get(readOnly)!.steps[0]!.status, 'pending', 'a read-only step just runs again');
  assert.equal(rig.store.get(readOnly)!.status, 'waiting', 'still paused');
  await rig.engine.resume(readOnly);
  assert.equal((await rig.until(readOnly, 'completed', 'failed')).status, 'completed');
});

void test('a step that ends after its flow was cancelled is recorded (a cancelled prompt fails), and the flow stays cancelled', { timeout: 30_000 }, async (t) => {
  const gate = deferred<string>();
  const rig = await engineRig(t, { answer: () => gate.promise });
  const f = await rig.engine.create({ title: 'long prompt', steps: [{ type: 'prompt', text: 'think hard' }, { type: 'tool', tool: 'append_line', args: { line: 'after' } }] }, {});
  await rig.until(f.id, 'running');
  while (rig.prompts.length === 0) await new Promise((resolve) => setImmediate(resolve));
  await rig.engine.cancel(f.id);
  gate.resolve('too late');
  while (rig.engine.running() > 0) await new Promise((resolve) => setImmediate(resolve));
  const after = rig.store.get(f.id)!;
  assert.equal(after.status, 'cancelled');
  assert.deepEqual(
    after.steps.map((s) => s.status),
    ['failed', 'pending'],
  );
  assert.equal(after.steps[0]!.error, 'the turn was cancelled (its flow was cancelled)');
  assert.deepEqual(
    after.history.map((h) => h.to),
    ['queued', 'running', 'cancelled'],
  );
  assert.deepEqual(rig.lines(), []);
  chained(after);
});

void test('a cancel that lands as a step is marked running: the step never begins (no effect after a cancel)', { timeout: 30_000 }, async (t) => {
  const rig = await engineRig(t);
  let cancelling: Promise<unknown> | undefined;
  rig.bus.on('cancel-on-start', (e) => {
    // Written (not yet committed) before the engine goes on from announcing the start.
    if (e.type === 'taskflow_update' && e.step?.status === 'running' && !cancelling) cancelling = rig.engine.cancel(e.flowId);
  });
  const f = await rig.engine.create({ title: 'raced', steps: [{ type: 'tool', tool: 'append_line', args: { line: 'after a cancel' } }] }, {});
  await rig.until(f.id, 'cancelled');
  await cancelling;
  while (rig.engine.running() > 0) await new Promise((resolve) => setImmediate(resolve));
  const after = rig.store.get(f.id)!;
  assert.deepEqual(rig.lines(), [], 'the effect did not happen');
  assert.equal(after.steps[0]!.status, 'failed');
  assert.equal(after.steps[0]!.error, 'its flow was cancelled before the step began');
  chained(after);
});

void test('a call held for approval while its flow was being cancelled: the step records the request, stays out of the way, and the approval is still recorded', { timeout: 30_000 }, async (t) => {
  const rig = await engineRig(t);
  const gate = deferred();
  const asked = deferred();
  rig.permissions.use('test', {
    check: async () => {
      asked.resolve();
      await gate.promise;
      return { verdict: 'pending', requestId: 'apr_late', reason: 'held' };
    },
  });
  const f = await rig.engine.create({ title: 'held late', steps: [{ type: 'tool', tool: 'reboot' }, { type: 'tool', tool: 'read_temp' }] }, {});
  await asked.promise;
  await rig.engine.cancel(f.id);
  gate.resolve();
  while (rig.engine.running() > 0) await new Promise((resolve) => setImmediate(resolve));
  let after = rig.store.get(f.id)!;
  assert.equal(after.status, 'cancelled');
  assert.deepEqual([after.steps[0]!.status, after.steps[0]!.approval_request_id], ['waiting', 'apr_late']);
  chained(after);
  rig.bus.emit({ type: 'approval_resolved', requestId: 'apr_late', sessionId: 'dashboard', turnId: `taskflow:${f.id}:0`, tool: 'reboot', args: {}, status: 'approved', result: { status: 'ok', summary: 'rebooting' }, at: 1 });
  while (rig.store.get(f.id)!.steps[0]!.status === 'waiting') await new Promise((resolve) => setImmediate(resolve));
  after = rig.store.get(f.id)!;
  assert.equal(after.status, 'cancelled', 'the approval does not bring the flow back');
  assert.deepEqual(
    after.steps.map((s) => s.status),
    ['succeeded', 'pending'],
  );
  chained(after);
});

void test('a kill while the step of a cancelled flow ran: the step is recorded as unknown (an effect) or failed (read-only), the flow stays cancelled', { timeout: 30_000 }, async (t) => {
  const rig = await engineRig(t);
  const effectful = await killedWhile(rig, 'cancelled', [{ type: 'tool', tool: 'append_line', args: { line: 'maybe' } }]);
  const readOnly = await killedWhile(rig, 'cancelled', [{ type: 'prompt', text: 'hi' }]);
  for (const [id, status] of [
    [effectful, 'unknown'],
    [readOnly, 'failed'],
  ] as const) {
    const f = rig.store.get(id)!;
    assert.equal(f.status, 'cancelled');
    assert.deepEqual(
      f.history.map((h) => h.to),
      ['queued', 'running', 'cancelled'],
    );
    assert.equal(f.steps[0]!.status, status);
    chained(f);
  }
  assert.deepEqual(rig.lines(), []);
  assert.equal(rig.prompts.length, 0, 'nothing ran again');
});

void test('a restart while the timer is waking flows: the stop waits for the wake-up, nothing touches the closed store, and every flow goes on', { timeout: 30_000 }, async (t) => {
  const rig = await engineRig(t);
  const ids = await Promise.all([0, 1, 2].map(async () => (await rig.engine.create({ title: 'sleeper', steps: [{ type: 'wait', seconds: 0.02 }, { type: 'tool', tool: 'read_temp' }] }, {})).id));
  for (const id of ids) await rig.until(id, 'waiting');
  // The first wake-up announced: the timer's loop is between two flows when the brain stops.
  const restarted = new Promise<void>((resolve, reject) => {
    rig.bus.on('restart-on-wake', (e) => {
      if (e.type !== 'taskflow_update' || !/\(wait\) is over/.test(e.reason)) return;
      rig.bus.off('restart-on-wake');
      rig.restart().then(resolve, reject);
    });
  });
  await restarted;
  for (const id of ids) assert.equal((await rig.until(id, 'completed', 'failed')).status, 'completed');
  assert.deepEqual(rig.errors, []);
});

// ── The property ─────────────────────────────────────────────────────────────────────────────────
const STEP_KINDS = ['read', 'append', 'append_fail', 'reboot', 'wait_short', 'wait_long', 'wait_event', 'branch', 'note', 'prompt'] as const;
type StepKind = (typeof STEP_KINDS)[number];
interface StepSeed {
  kind: StepKind;
  a: number;
  b: number;
  flag: boolean;
}

/** A valid step of `kind` at `index` of `count` steps. */
function step(seed: StepSeed, index: number, count: number): StepSpec {
  switch (seed.kind) {
    case 'read':
      return { type: 'tool', tool: 'read_temp' };
    case 'append':
      return { type: 'tool', tool: 'append_line', args: { line: `{{flow.id}} step ${index}` } };
    case 'append_fail':
      return { type: 'tool', tool: 'append_line', args: { line: 'fail' } };
    case 'reboot':
      return { type: 'tool', tool: 'reboot' };
    case 'wait_short':
      return { type: 'wait', seconds: 0.01 + (seed.a % 3) / 100 };
    case 'wait_long':
      return { type: 'wait', seconds: 3600 };
    case 'wait_event':
      return { type: 'wait', event: seed.flag ? { type: 'memory_changed', match: { tier: 'note' } } : { type: 'memory_changed' } };
    case 'branch': {
      const goto = seed.a % (count + 1);
      const ref = index > 0 && seed.flag ? { ref: `{{steps.${seed.b % index}.status}}`, op: 'eq' as const, value: 'succeeded' } : { ref: '{{context.go}}', op: 'truthy' as const };
      return { type: 'branch', if: ref, goto, ...(goto <= index ? { max_loops: 1 + (seed.b % 2) } : {}) };
    }
    case 'note':
      return { type: 'note', text: 'noted by {{flow.id}}' };
    case 'prompt':
      return { type: 'prompt', text: `step ${index} asks` };
  }
}

type Op =
  | { op: 'create'; steps: StepSeed[]; go: boolean; scheduled?: boolean; settle: boolean }
  | { op: 'cancel'; flow: number; settle: boolean }
  | { op: 'pause'; flow: number; timed: boolean; settle: boolean }
  | { op: 'resume'; flow: number; decision: 'retry' | 'skip' | 'none'; settle: boolean }
  | { op: 'approval'; request: number; approved: boolean; settle: boolean }
  | { op: 'event'; tier: 'note' | 'episode'; settle: boolean }
  | { op: 'crash'; ticks: number; settle: boolean }
  | { op: 'restart'; settle: boolean }
  | { op: 'turns'; n: number; settle: boolean };

/** Kinds drawn with weights: mostly steps that run, some that wait. */
const WEIGHTED_KINDS: readonly StepKind[] = [...STEP_KINDS, 'read', 'append', 'append', 'branch', 'branch'];
const seed = fc.record({ kind: fc.constantFrom(...WEIGHTED_KINDS), a: fc.nat(20), b: fc.nat(20), flag: fc.boolean() });
const settle = fc.boolean();
const create = fc.record({ op: fc.constant('create' as const), steps: fc.array(seed, { minLength: 1, maxLength: 6 }), go: fc.boolean(), scheduled: fc.nat(6).map((n) => n === 0), settle });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: create },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('cancel' as const), flow: fc.nat(), settle }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('pause' as const), flow: fc.nat(), timed: fc.boolean(), settle }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('resume' as const), flow: fc.nat(), decision: fc.constantFrom('retry' as const, 'skip' as const, 'none' as const), settle }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('approval' as const), request: fc.nat(), approved: fc.boolean(), settle }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('event' as const), tier: fc.constantFrom('note' as const, 'episode' as const), settle }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('crash' as const), ticks: fc.nat(6), settle }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('restart' as const), settle }) },
  // Lets the engine go on a few event-loop turns: the next operation lands in the middle of a step.
  { weight: 3, arbitrary: fc.record({ op: fc.constant('turns' as const), n: fc.nat(6), settle: fc.constant(false) }) },
);

const turns = (n: number): Promise<void> => new Promise((resolve) => (n <= 0 ? setImmediate(resolve) : setImmediate(() => void turns(n - 1).then(resolve))));

/** Waits until the engine drives nothing and no flow is queued or running, three event-loop turns in a row (a change is visible to reads as soon as it is written). */
async function quiesce(rig: EngineRig): Promise<void> {
  const ids = (): string[] => allFlows(rig);
  let calm = 0;
  for (let i = 0; i < 50_000 && calm < 3; i++) {
    await turns(0);
    const busy = ids().filter((id) => FLOW_LIVE.has(rig.store.flow(id)!.status));
    calm = rig.engine.running() === 0 && busy.length === 0 ? calm + 1 : 0;
  }
  if (calm < 3) {
    const left = ids().map((id) => rig.store.get(id)!).filter((f) => FLOW_LIVE.has(f.status));
    assert.fail(`the engine is idle (${rig.engine.running()} driven) but flows are left live: ${JSON.stringify(left.map((f) => ({ id: f.id, status: f.status, current: f.current_step, steps: f.steps.map((s) => s.status), history: f.history })))}`);
  }
}

/** Every timeline is a chain of allowed transitions ending in the current status. */
function chained(f: Taskflow): void {
  const where = `flow ${f.id} ${JSON.stringify({ history: f.history, steps: f.steps.map((s) => s.history) })}`;
  assert.ok(f.history.length > 0, where);
  assert.equal(f.history[0]!.from, null, where);
  for (let i = 1; i < f.history.length; i++) {
    const [prev, h] = [f.history[i - 1]!, f.history[i]!];
    assert.equal(h.from, prev.to, where);
    assert.ok(canFlow(h.from as FlowStatus, h.to as FlowStatus), `flow ${String(h.from)} → ${h.to} is not allowed: ${where}`);
  }
  assert.equal(f.history.at(-1)!.to, f.status, where);
  for (const s of f.steps) {
    let at: StepStatus = 'pending';
    for (const h of s.history) {
      assert.equal(h.from, at, `step ${s.index}: ${where}`);
      assert.ok(canStep(at, h.to as StepStatus), `step ${s.index} ${at} → ${h.to} is not allowed: ${where}`);
      at = h.to as StepStatus;
    }
    assert.equal(s.status, at, `step ${s.index}: ${where}`);
  }
}

interface Effect {
  flowId: string;
  step: number;
  /** Loop iterations and retries after unknown the step had gone through when the effect happened. */
  epoch: number;
  retried: boolean;
}

const allFlows = (rig: EngineRig): string[] =>
  rig.store
    .list({ limit: 500 })
    .taskflows.map((f) => f.id)
    .reverse();

const RAM_DISK = existsSync('/dev/shm') ? '/dev/shm' : undefined;
const loopReset = /^loop \d+ of \d+ from branch \d+$/;

async function run(ops: readonly Op[], t: { after(fn: () => unknown): void }): Promise<void> {
  const effects: Effect[] = [];
  const problems: string[] = [];
  const rig: EngineRig = await engineRig(t, {
    max_running: 2,
    slowTools: true,
    // Hundreds of brains, each committing every event-loop turn: on a RAM disk where there is one (fsync is not what is tested here).
    parent: RAM_DISK,
    onAppend: (turnId, line) => {
      const [, flowId, index] = /^taskflow:(.+):(\d+)$/.exec(turnId) ?? [];
      const f = rig.store.get(flowId!)!;
      const s = f.steps[Number(index)]!;
      // The step is durably running before its effect starts (a crash now leaves it unknown, never pending).
      if (s.status !== 'running') problems.push(`append_line "${line}" ran while step ${index} of ${f.id} was ${s.status}`);
      const resets = s.history.filter((h) => h.to === 'pending' && (h.from === 'unknown' || loopReset.test(h.reason)));
      effects.push({ flowId: f.id, step: s.index, epoch: resets.length, retried: resets.some((h) => h.from === 'unknown') });
    },
  });
  const held: { id: string; tool: string }[] = [];
  const hook = holding(['reboot'], held);
  rig.permissions.use('test', hook);
  // Every flow in the store: those created, and the runs scheduled flows spawn.
  const ids = (): string[] => allFlows(rig);
  const finals = new Map<string, Taskflow>();
  /** After quiesce: the engine drives nothing, so no step is running (a step that ends after its flow was cancelled is recorded too). */
  const observe = (): void => {
    for (const id of ids()) {
      const f = rig.store.get(id)!;
      chained(f);
      assert.ok(f.steps.every((s) => s.status !== 'running'), `the engine is idle but a step of ${f.status} flow ${f.id} is running: ${JSON.stringify({ flow: f.history, steps: f.steps.map((s) => s.history) })}`);
      const before = finals.get(id);
      if (before) unchangedSinceFinal(before, f);
      else if (FLOW_FINAL.has(f.status)) finals.set(id, f);
    }
  };
  const tolerated = (err: unknown): void => {
    if (err instanceof AppError && [400, 404, 409].includes(err.status)) return;
    throw err;
  };
  try {
    for (const o of ops) {
      const known = ids();
      const pick = (n: number): string | undefined => (known.length === 0 ? undefined : known[n % known.length]);
      switch (o.op) {
        case 'create': {
          const steps = o.steps.map((s, i) => step(s, i, o.steps.length));
          // A yearly schedule never comes during the test: its runs are spawned by resuming it.
          const input: CreateTaskflow = { title: 'random', steps, context: { go: o.go }, ...(o.scheduled ? { schedule: '0 0 1 1 *', timezone: 'UTC' } : {}) };
          await rig.engine.create(input, {});
          break;
        }
        case 'cancel': {
          const id = pick(o.flow);
          if (id) await rig.engine.cancel(id).catch(tolerated);
          break;
        }
        case 'pause': {
          const id = pick(o.flow);
          if (id) await rig.engine.wait(id, o.timed ? Date.now() / 1000 + 0.02 : undefined).catch(tolerated);
          break;
        }
        case 'resume': {
          const id = pick(o.flow);
          if (id) await rig.engine.resume(id, o.decision === 'none' ? undefined : o.decision).catch(tolerated);
          break;
        }
        case 'approval': {
          const request = held.length === 0 ? undefined : held[o.request % held.length];
          if (!request) break;
          const base = { type: 'approval_resolved' as const, requestId: request.id, sessionId: 'dashboard', turnId: 'taskflow:x:0', tool: request.tool, args: {}, at: Date.now() / 1000 };
          rig.bus.emit(o.approved ? { ...base, status: 'approved', result: { status: 'ok', summary: 'rebooted', data: { ok: true } } } : { ...base, status: 'rejected' });
          break;
        }
        case 'event':
          rig.bus.emit({ type: 'memory_changed', kind: 'upsert', tier: o.tier, id: `${o.tier}_1`, revision: 1 });
          break;
        case 'crash':
          await turns(o.ticks);
          await rig.crash();
          // The new engine holds reboot too (the plane is the rig's, shared by both engines).
          break;
        case 'restart':
          await rig.restart();
          break;
        case 'turns':
          await turns(o.n);
          break;
      }
      if (o.settle) {
        await quiesce(rig);
        observe();
      }
    }
    await quiesce(rig);
    await rig.engine.stop();
    observe();
    for (const id of ids()) assert.ok(!FLOW_LIVE.has(rig.store.flow(id)!.status), `flow ${id} is left ${rig.store.flow(id)!.status}`);
    assert.deepEqual(problems, []);
    const seen = new Map<string, Effect>();
    for (const e of effects) {
      const key = `${e.flowId}:${e.step}:${e.epoch}`;
      assert.ok(!seen.has(key), `append_line of step ${e.step} in ${e.flowId} took effect twice in iteration ${e.epoch}: ${JSON.stringify(rig.store.get(e.flowId)!.steps[e.step]!.history)}`);
      seen.set(key, e);
    }
    assert.deepEqual(rig.errors, [], 'nothing was logged as an error');
  } finally {
    await rig.close();
  }
}

/**
 * A completed or cancelled flow keeps its status and timeline. Only a step that was running (or held
 * for approval) may still end: held, then succeeded or failed — never run again.
 */
function unchangedSinceFinal(before: Taskflow, now: Taskflow): void {
  const where = `${before.id} was ${before.status}: ${JSON.stringify(before.history)} → ${JSON.stringify(now.history)}`;
  assert.equal(now.status, before.status, where);
  assert.deepEqual(now.history, before.history, where);
  before.steps.forEach((s, i) => {
    const after = now.steps[i]!;
    const added = after.history.slice(s.history.length);
    const what = `step ${i} of a final flow: ${JSON.stringify(s.history)} → ${JSON.stringify(after.history)}`;
    assert.deepEqual(after.history.slice(0, s.history.length), s.history, what);
    if (added.length === 0) return;
    assert.ok(s.status === 'running' || s.status === 'waiting', `only a running or held step goes on: ${what}`);
    assert.ok(added.length <= 2 && added.every((h) => h.to === 'waiting' || h.to === 'succeeded' || h.to === 'failed'), `it only ends: ${what}`);
  });
}

void test('property: random operations, approvals, events, kills and restarts never reach a forbidden transition, never repeat an effect, never leave a flow running', async (t) => {
  await fc.assert(
    fc.asyncProperty(create, fc.array(op, { minLength: 1, maxLength: 20 }), (first, ops) => run([first, ...ops], t)),
    { numRuns: 150, includeErrorInReport: true },
  );
});

/** Operations that land at a chosen moment of a running effect: a pause, cancel or resume, then a kill or restart, then a person's decision. */
const timed: fc.Arbitrary<Op[]> = fc
  .tuple(
    fc.array(fc.constantFrom<StepKind>('append', 'append', 'read', 'reboot', 'prompt', 'wait_short', 'branch'), { minLength: 1, maxLength: 3 }),
    fc.nat(8),
    fc.array(fc.constantFrom('pause', 'cancel', 'resume', 'approve'), { minLength: 1, maxLength: 2 }),
    fc.nat(8),
    fc.constantFrom('crash' as const, 'restart' as const),
    fc.constantFrom('retry' as const, 'skip' as const, 'none' as const),
  )
  .map(([kinds, before, middle, after, stop, decision]) => [
    { op: 'create', steps: ['append' as const, ...kinds].map((kind, i) => ({ kind, a: i, b: 0, flag: false })), go: true, settle: false },
    { op: 'turns', n: before, settle: false },
    ...middle.map((m): Op => (m === 'pause' ? { op: 'pause', flow: 0, timed: false, settle: false } : m === 'cancel' ? { op: 'cancel', flow: 0, settle: false } : m === 'approve' ? { op: 'approval', request: 0, approved: true, settle: false } : { op: 'resume', flow: 0, decision: 'none', settle: false })),
    { op: 'turns', n: after, settle: false },
    stop === 'crash' ? { op: 'crash', ticks: 0, settle: true } : { op: 'restart', settle: true },
    { op: 'resume', flow: 0, decision, settle: true },
    { op: 'resume', flow: 0, decision: 'retry', settle: true },
  ]);

void test('property: a pause, cancel or resume at any moment of a running effect, then a kill or restart, never repeats the effect or leaves a step running', async (t) => {
  await fc.assert(
    fc.asyncProperty(timed, (ops) => run(ops, t)),
    { numRuns: 150, includeErrorInReport: true },
  );
});
