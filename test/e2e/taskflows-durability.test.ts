// TaskFlows durability on the built brain (issue 12, docs/taskflows.md "Durability"): kill -9 at random
// moments — and at the moment an effectful step is seen running, some just after its flow was
// cancelled or paused — over flows that mix read-only steps
// (list_directory, read_file, wait, a prompt without tools, branches) with effectful ones (run_command
// appending its own tag to a log outside the brain). After every restart and at the end: no flow is lost,
// no tag is in the log twice, a step whose effect may have happened is succeeded or unknown (never
// pending, never re-run), a flow with an unknown step waits for "retry or skip" (a resume without a
// decision is refused), a cancelled flow keeps no running step, and every timeline is a chain of
// allowed transitions. A person's decision (retry when the tag is not in the log, else skip)
// then brings every flow to completed (a cancelled one stays cancelled) with every effect exactly once. Also: a wait whose deadline passed
// while the brain was down fires exactly once after start-up; with taskflows.max_running 2, never more
// than 2 flows run at once. Set SVC_TEST_SEED to repeat a run's random moments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { CreateTaskflow, Taskflow } from '../../protocol/taskflows';
import {
  assertTimeline,
  call,
  createFlow,
  effectLines,
  effectStep,
  flowsBrain,
  getFlow,
  listFlows,
  mostRunning,
  seeded,
  sleep,
  tagOf,
  type FlowsBrain,
} from './taskflows-rig';

const TRIALS = 22;
/** Bound of every poll loop below (polls, not a duration: each poll is one or a few requests). */
const MAX_POLLS = 1500;
const POLL_MS = 20;

interface Tally {
  unknown: number;
  retried: number;
  skipped: number;
  rerun: number;
}

/** A flow of read-only and effectful steps; the effects' tags are `f<n>a` … `f<n>d`. */
function mixedFlow(rig: FlowsBrain, n: number, rnd: () => number): CreateTaskflow {
  const effect = (suffix: string) => effectStep(rig.work, rig.log, `f${n}${suffix}`, round2(rnd() * 0.1), round2(0.05 + rnd() * 0.1));
  return {
    title: `trial flow ${n}`,
    context: { n },
    steps: [
      { type: 'tool', tool: 'list_directory', args: { path: rig.work } },
      effect('a'),
      { type: 'wait', seconds: round2(0.05 + rnd() * 0.3) },
      { type: 'prompt', text: `Flow ${n}: say hello in three words.` },
      effect('b'),
      // Holds (the folder has readme.txt): jumps over step 6, which would fail.
      { type: 'branch', if: { ref: '{{steps.0.result.total}}', op: 'ge', value: 1 }, goto: 7 },
      { type: 'tool', tool: 'read_file', args: { path: join(rig.work, 'missing.txt') } },
      { type: 'tool', tool: 'read_file', args: { path: join(rig.work, 'readme.txt') } },
      effect('c'),
      // Does not hold: on to step 10.
      { type: 'branch', if: { ref: '{{steps.7.result.content}}', op: 'contains', value: 'cactus' }, goto: 11 },
      effect('d'),
      { type: 'wait', seconds: round2(rnd() * 0.2) },
    ],
  };
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

function counts(rig: FlowsBrain): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of effectLines(rig.log)) m.set(line, (m.get(line) ?? 0) + 1);
  return m;
}

/**
 * Every flow is there with a consistent timeline; no effect ran twice; a step whose effect may have
 * happened is succeeded, unknown, or skipped by a person after unknown; a crash re-ran only read-only
 * steps and marked only effectful ones unknown; nothing failed; a waiting flow waits for a reason.
 */
async function check(rig: FlowsBrain, ids: readonly string[], cancelled: ReadonlySet<string>): Promise<Taskflow[]> {
  // The brain runs on while the flows are read: the log is read before them (a step pending then had
  // not run) and after them (a step succeeded by then had run).
  const before = counts(rig);
  const flows: Taskflow[] = [];
  for (const id of ids) flows.push(await getFlow(rig.brain, id));
  const ran = counts(rig);
  for (const [tag, n] of ran) assert.ok(n <= 1, `${tag} ran ${n} times`);
  for (const flow of flows) {
    assertTimeline(flow);
    const ended = flow.status === 'cancelled';
    assert.ok(flow.status !== 'failed' && (!ended || cancelled.has(flow.id)), `${flow.id} ${flow.status}: ${flow.error} ${JSON.stringify(flow.history.at(-1))}`);
    for (const step of flow.steps) {
      const tag = tagOf(step);
      const where = `${flow.id} step ${step.index} (${tag ?? step.type}, ${step.status})`;
      for (const tr of step.history) {
        if (tr.from === 'running' && tr.to === 'pending') assert.equal(tag, null, `${where}: only a read-only step runs again after a crash`);
        if (tr.to === 'unknown') assert.notEqual(tag, null, `${where}: only an effectful step becomes unknown`);
      }
      if (tag === null) continue;
      const n = ran.get(tag) ?? 0;
      if (step.status === 'succeeded') assert.equal(n, 1, `${where}: succeeded, so its effect is in the log once`);
      else if (step.status === 'pending') assert.equal(before.get(tag) ?? 0, 0, `${where}: pending, so its effect had not happened`);
      else if (step.status === 'skipped') assert.ok(n === 1 && step.history.some((h) => h.from === 'unknown' && h.to === 'skipped'), `${where}: skipped only by a person, after unknown, when its effect was in the log`);
      else if (step.status === 'running') assert.ok(flow.status === 'running' && flow.current_step === step.index, `${where}: running in this brain now`);
      else if (step.status === 'unknown' && ended) assert.ok(step.history.at(-1)!.reason.length > 0, `${where}: a step of a cancelled flow the crash interrupted`);
      else if (step.status === 'unknown') {
        assert.equal(flow.status, 'waiting', `${where}: its flow waits`);
        assert.equal(flow.current_step, step.index, `${where}: at this step`);
        assert.equal(flow.wait_until, null, `${where}: for a person, not for a time`);
        // A flow paused before the crash was waiting already: its timeline keeps the pause as the last
        // flow transition (the same status adds no row), and the step's own history says why.
        if (flow.history.at(-1)!.reason.startsWith('paused')) assert.match(step.history.at(-1)!.reason, /unknown/, `${where}: the step says why`);
        else assert.match(flow.history.at(-1)!.reason, /retry or skip/, `${where}: the flow says what it waits for`);
      } else assert.fail(`${where}: ${step.error}`);
    }
    if (flow.status === 'waiting') {
      const current = flow.steps[flow.current_step!]!;
      const paused = flow.history.at(-1)!.reason === 'paused until resumed';
      assert.ok(paused || current.status === 'unknown' || (current.type === 'wait' && current.status === 'waiting' && flow.wait_until !== null), `${flow.id} waits without a reason: ${JSON.stringify(flow.history.at(-1))}`);
    }
  }
  return flows;
}

/** A person's decision on each unknown step: retry when its effect is not in the log, else skip. */
async function decide(rig: FlowsBrain, flows: readonly Taskflow[], tally: Tally): Promise<void> {
  for (const flow of flows) {
    const step = flow.current_step === null ? undefined : flow.steps[flow.current_step];
    if (flow.status === 'waiting' && step?.status !== 'unknown' && flow.history.at(-1)!.reason === 'paused until resumed') {
      const r = await call<Taskflow>(rig.brain, 'POST', `/api/taskflows/${flow.id}/resume`, {});
      assert.equal(r.status, 200, JSON.stringify(r.body));
      continue;
    }
    if (flow.status !== 'waiting' || step?.status !== 'unknown') continue;
    tally.unknown++;
    // A resume without a decision is refused: a person has to choose.
    const refused = await call<{ error: { code: string; message: string } }>(rig.brain, 'POST', `/api/taskflows/${flow.id}/resume`, {});
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.match(refused.body.error.message, /retry .*skip/);
    const decision = rig.ran(tagOf(step)!) === 0 ? 'retry' : 'skip';
    tally[decision === 'retry' ? 'retried' : 'skipped']++;
    const r = await call<Taskflow>(rig.brain, 'POST', `/api/taskflows/${flow.id}/resume`, { decision });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.notEqual(r.body.steps[step.index]!.status, 'unknown');
  }
}

/** Polls until some flow runs an effectful step (then the kill lands mid-effect): its id, or null when none did. */
async function untilEffectRuns(rig: FlowsBrain): Promise<string | null> {
  for (let i = 0; i < MAX_POLLS / 10; i++) {
    for (const summary of (await listFlows(rig.brain, 'running')).taskflows) {
      const flow = await getFlow(rig.brain, summary.id);
      const step = flow.current_step === null ? undefined : flow.steps[flow.current_step];
      if (step && step.status === 'running' && tagOf(step) !== null) return flow.id;
    }
    await sleep(POLL_MS);
  }
  return null;
}

void test(`kill -9 at ${TRIALS} random moments: no effect runs twice, no flow is lost, every timeline holds`, { timeout: 170_000 }, async (t) => {
  const seed = Number(process.env.SVC_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
  t.diagnostic(`seed ${seed} (SVC_TEST_SEED repeats it)`);
  const rnd = seeded(seed);
  const rig = await flowsBrain(t);
  const ids: string[] = [];
  const tally: Tally = { unknown: 0, retried: 0, skipped: 0, rerun: 0 };
  const cancelled = new Set<string>();
  let midEffect = 0;
  let paused = 0;
  for (let trial = 0; trial < TRIALS; trial++) {
    for (let k = 0; k < 2; k++) ids.push((await createFlow(rig.brain, mixedFlow(rig, ids.length, rnd))).id);
    // Odd trials: the moment an effect is seen running, and every third of those the flow is cancelled
    // or paused just before the kill (its step still running). Even ones: anywhere within 0.7 s.
    const busy = trial % 2 === 1 ? await untilEffectRuns(rig) : null;
    if (busy !== null) {
      midEffect++;
      const what = trial % 6;
      const r = what === 1 ? await call<Taskflow>(rig.brain, 'POST', `/api/taskflows/${busy}/cancel`, { reason: 'a kill test' }) : what === 3 ? await call<Taskflow>(rig.brain, 'POST', `/api/taskflows/${busy}/wait`, {}) : null;
      if (r !== null) assert.equal(r.status, 200, JSON.stringify(r.body));
      if (what === 1) cancelled.add(busy);
      if (what === 3) paused++;
    } else await sleep(Math.floor(rnd() * 700));
    await rig.crash();
    const flows = await check(rig, ids, cancelled);
    for (const id of cancelled) assert.ok(!flows.find((f) => f.id === id)!.steps.some((s) => s.status === 'running'), `${id}: cancelled, no step of it runs after a restart`);
    await decide(rig, flows, tally);
  }

  let flows: Taskflow[] = [];
  for (let i = 0; i < MAX_POLLS; i++) {
    flows = await check(rig, ids, cancelled);
    if (flows.every((f) => f.status === (cancelled.has(f.id) ? 'cancelled' : 'completed'))) break;
    await decide(rig, flows, tally);
    await sleep(POLL_MS * 5);
  }
  assert.deepEqual(
    flows.filter((f) => f.status !== (cancelled.has(f.id) ? 'cancelled' : 'completed')).map((f) => [f.id, f.status, f.history.at(-1)!.reason]),
    [],
    'every flow ends completed, or cancelled when it was',
  );
  const ran = counts(rig);
  for (const flow of flows) {
    for (const step of flow.steps) {
      const tag = tagOf(step);
      if (tag !== null && !cancelled.has(flow.id)) assert.equal(ran.get(tag), 1, `${flow.id} step ${step.index}: ${tag} ran exactly once`);
      tally.rerun += step.history.filter((h) => h.from === 'running' && h.to === 'pending').length;
    }
    if (!cancelled.has(flow.id)) assert.equal(flow.steps[6]!.status, 'skipped', 'the branch jumped over step 6');
  }
  assert.ok([...ran.keys()].every((tag) => flows.some((f) => f.steps.some((s) => tagOf(s) === tag))), 'no effect the flows did not ask for');
  assert.ok(mostRunning(flows) <= 4, `at most taskflows.max_running (4) ran at once, across every restart: ${mostRunning(flows)}`);
  assert.ok(tally.unknown >= 1, `some kill landed while an effect ran: ${JSON.stringify(tally)}`);
  t.diagnostic(`${ids.length} flows, ${TRIALS} kills (${midEffect} mid-effect, ${cancelled.size} of them just after a cancel, ${paused} after a pause): ${JSON.stringify(tally)}`);
});

void test('a wait whose deadline passed while the brain was down fires exactly once after start-up', async (t) => {
  const rig = await flowsBrain(t);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await createFlow(rig.brain, { title: `wait ${i}`, steps: [{ type: 'wait', seconds: 1 }, effectStep(rig.work, rig.log, `w${i}`, 0, 0)] })).id);
  let waiting: Taskflow[] = [];
  for (let i = 0; i < MAX_POLLS; i++) {
    waiting = await Promise.all(ids.map((id) => getFlow(rig.brain, id)));
    if (waiting.every((f) => f.status === 'waiting' && f.steps[0]!.status === 'waiting')) break;
    await sleep(POLL_MS);
  }
  assert.deepEqual(waiting.map((f) => f.status), ['waiting', 'waiting', 'waiting']);
  await rig.kill();
  const deadline = Math.max(...waiting.map((f) => f.wait_until!));
  // Down until every deadline has passed (the wait is one second long).
  await sleep(Math.max(0, deadline * 1000 - Date.now()) + 20);
  const up = Date.now() / 1000;
  assert.ok(up > deadline);
  await rig.start();

  let done: Taskflow[] = [];
  for (let i = 0; i < MAX_POLLS; i++) {
    done = await Promise.all(ids.map((id) => getFlow(rig.brain, id)));
    if (done.every((f) => f.status === 'completed')) break;
    await sleep(POLL_MS);
  }
  for (const [i, flow] of done.entries()) {
    assert.equal(flow.status, 'completed', JSON.stringify(flow.history));
    assertTimeline(flow);
    const wait = flow.steps[0]!;
    assert.deepEqual(wait.history.map((h) => [h.from, h.to]), [['pending', 'waiting'], ['waiting', 'succeeded']], 'waited once, fired once');
    const result = wait.result as { waited_until: number; fired_at: number };
    assert.equal(result.waited_until, waiting[i]!.wait_until);
    assert.ok(result.fired_at >= up, 'fired after start-up, not before the kill');
    assert.equal(rig.ran(`w${i}`), 1, 'the step after the wait ran once');
  }
  // Another start changes nothing: the wait does not fire again.
  await rig.restart();
  for (const [i, flow] of done.entries()) {
    const again = await getFlow(rig.brain, flow.id);
    assert.deepEqual(again.steps.map((s) => s.history), flow.steps.map((s) => s.history));
    assert.deepEqual(again.history, flow.history);
    assert.equal(rig.ran(`w${i}`), 1);
  }
});

void test('with taskflows.max_running 2, at most 2 flows run at any moment; the rest queue and all finish', async (t) => {
  const rig = await flowsBrain(t, { taskflows: { max_running: 2 } });
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const effect = (s: string) => effectStep(rig.work, rig.log, `m${i}${s}`, 0.05, 0.05);
    ids.push((await createFlow(rig.brain, { title: `slot ${i}`, steps: [effect('a'), { type: 'tool', tool: 'list_directory', args: { path: rig.work } }, effect('b')] })).id);
  }
  let seen = 0;
  let flows: Taskflow[] = [];
  for (let i = 0; i < MAX_POLLS; i++) {
    const running = (await listFlows(rig.brain, 'running')).count;
    assert.ok(running <= 2, `${running} flows running at once`);
    seen = Math.max(seen, running);
    flows = await Promise.all(ids.map((id) => getFlow(rig.brain, id)));
    if (flows.every((f) => f.status === 'completed')) break;
    await sleep(POLL_MS);
  }
  assert.deepEqual(flows.map((f) => f.status), Array<string>(6).fill('completed'));
  flows.forEach(assertTimeline);
  // The histories see every moment, not only the polled ones.
  assert.equal(mostRunning(flows), 2, 'two ran together, never three');
  assert.ok(seen >= 1);
  assert.ok(flows.some((f) => f.history.some((h) => h.from === 'queued' && h.to === 'running' && h.at > Math.min(...flows.map((g) => g.history.find((x) => x.to === 'completed')!.at)))), 'a queued flow started only after another completed');
  for (let i = 0; i < 6; i++) for (const s of ['a', 'b']) assert.equal(rig.ran(`m${i}${s}`), 1);
});
