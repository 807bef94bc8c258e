// TaskFlows (issue 12, docs/taskflows.md): what a step costs and what waiting flows cost.
//  - step overhead: one flow of 1,000 no-op steps (branches that do not jump: one durable commit each),
//    the same with 100 (does a step cost more in a longer flow?), and one of 1,000 passive tool steps
//    (list_directory: two commits each, running then succeeded). Steps/s from the flow's own
//    started_at/completed_at; the brain's CPU time per step (all threads, creation and the sparse polls
//    included: it moves less with the machine's load than wall time); its RSS at completion and after
//    one GET of the flow (every step and transition); GET /health latency while the branch flow runs;
//  - 100 flows waiting at once (wait seconds: 3600) on a fresh brain: RSS before and with them, and
//    the cold start of the brain with them pending against a home that never had a flow (and the home
//    the steps above ran on), alternated;
//  - deadline to step: flows [wait 1 s, list_directory] created one at a time, 50 ms apart; the
//    time from the wait's deadline (its result's waited_until) to the wait firing (fired_at) and to
//    the next step's started_at (p50/p99), and the same for 50 created at once (they queue behind
//    taskflows.max_running).
// Baselines in the same run: GET /health on the same brain when idle, the brain's idle RSS without
// flows, the cold start of a home without flows.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), steps, waiting, latencyFlows, restarts }
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { brainRuntime, cpuOf, freePort, memoryOf, percentile, round, sleep, startBrain, summary, latency } from '../lib/brain.mjs';

const TOKEN = 'bench-token-taskflows-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
/** Bound of every wait for flows to reach a state (in polls of 50 ms: ten minutes). */
const MAX_POLLS = 12_000;

async function api(brain, method, path, body, expect = 200) {
  const res = await fetch(`${brain.url}${path}`, { method, headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Milliseconds of `n` sequential GET /health, body read. */
async function healthLatency(brain, n) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(`${brain.url}/health`);
    await res.arrayBuffer();
    ms.push(performance.now() - t0);
  }
  return ms;
}


/** Polls until `count` flows are in `status` (the list's count, a cheap query), every `everyMs`. */
async function until(brain, status, count, everyMs = 50) {
  for (let i = 0; i < (MAX_POLLS * 50) / everyMs; i++) {
    const list = await api(brain, 'GET', `/api/taskflows?status=${status}&limit=1`);
    if (list.count >= count) return;
    const failed = await api(brain, 'GET', '/api/taskflows?status=failed&limit=1');
    if (failed.count > 0) throw new Error(`a flow failed: ${JSON.stringify(failed.taskflows[0])}`);
    await sleep(everyMs);
  }
  throw new Error(`${count} flows did not reach ${status}`);
}

/** One flow of `n` steps made by `step(i)`, run to completion; steps/s from the brain's own timestamps. */
async function stepRun(brain, title, n, step, during) {
  const before = (await api(brain, 'GET', '/api/taskflows?status=completed&limit=1')).count;
  const cpu0 = cpuOf(brain.child.pid).ms;
  const flow = await api(brain, 'POST', '/api/taskflows', { title, context: { go: false }, steps: Array.from({ length: n }, (_, i) => step(i)) }, 201);
  const sampled = during ? await during() : null;
  // Sparse polls: the time comes from the brain's own timestamps, and each poll costs the brain CPU.
  await until(brain, 'completed', before + 1, 250);
  const cpuMs = cpuOf(brain.child.pid).ms - cpu0;
  const rssAfter = memoryOf(brain.child.pid);
  const t0 = performance.now();
  const done = await api(brain, 'GET', `/api/taskflows/${flow.id}`);
  const showMs = performance.now() - t0;
  const seconds = done.completed_at - done.started_at;
  return {
    steps: n,
    seconds: round(seconds, 3),
    steps_per_s: Math.round(n / seconds),
    per_step_ms: round((seconds * 1000) / n, 2),
    cpu_ms_per_step: round(cpuMs / n, 2),
    rss_after: rssAfter,
    show_flow_ms: round(showMs, 1),
    rss_after_show: memoryOf(brain.child.pid),
    health_during: sampled,
  };
}

/** Cold start (spawn to the first /health 200, and the brain's CPU time by then) on `home`, stopped again at once. */
async function coldStart(root, runtime, home) {
  const brain = await startBrain(root, { home, port: await freePort(), runtime, token: TOKEN });
  await brain.stop();
  return { ms: brain.startMs, cpuMs: brain.startCpu.ms };
}

/** Starts the brain on `home` and lets it settle for a second (as idle RSS is measured elsewhere, after start-up work). */
async function settled(root, runtime, home) {
  const brain = await startBrain(root, { home, port: await freePort(), runtime, token: TOKEN });
  await sleep(1000);
  return brain;
}

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[taskflows] ${m}\n`));
  const nSteps = ctx.steps ?? 1000;
  const nWaiting = ctx.waiting ?? 100;
  const nLatency = ctx.latencyFlows ?? 50;
  const restarts = ctx.restarts ?? 6;
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'taskflows-'));
  // Three homes: never a flow (the baseline), only the waiting flows, and the one the steps ran on.
  const homes = { empty: join(dir, 'home-empty'), waiting: join(dir, 'home-waiting'), worked: join(dir, 'home-worked') };
  mkdirSync(join(dir, 'work'));
  const work = realpathSync(join(dir, 'work'));
  const runtime = await brainRuntime(root);
  let brain = null;
  try {
    await coldStart(root, runtime, homes.empty);

    log(`${nWaiting} flows waiting for an hour on a fresh brain`);
    brain = await settled(root, runtime, homes.waiting);
    const idleRss = memoryOf(brain.child.pid);
    for (let i = 0; i < nWaiting; i++) await api(brain, 'POST', '/api/taskflows', { title: `bench: an hour ${i}`, steps: [{ type: 'wait', seconds: 3600 }, { type: 'note', text: `an hour later ${i}` }] }, 201);
    await until(brain, 'waiting', nWaiting);
    await sleep(1000);
    const rssWaiting = memoryOf(brain.child.pid);
    await brain.stop();

    brain = await settled(root, runtime, homes.worked);
    await api(brain, 'POST', '/api/grants', { path: work, write: true }, 201);
    await healthLatency(brain, 30); // warm-up
    const healthIdle = await healthLatency(brain, 300);

    log(`a flow of ${nSteps} branch steps that do not jump, /health sampled while it runs`);
    const noop = (n) => (i) => ({ type: 'branch', if: { ref: '{{context.go}}', op: 'truthy' }, goto: Math.min(i + 2, n) });
    const branches = await stepRun(brain, 'bench: no-op branches', nSteps, noop(nSteps), async () => latency(await healthLatency(brain, 100)));
    log(`a flow of ${nSteps / 10} branch steps (the per-step cost at a tenth of the length)`);
    const shortBranches = await stepRun(brain, 'bench: fewer no-op branches', nSteps / 10, noop(nSteps / 10));
    log(`a flow of ${nSteps} list_directory steps`);
    const tools = await stepRun(brain, 'bench: passive tools', nSteps, () => ({ type: 'tool', tool: 'list_directory', args: { path: work } }));

    log(`deadline to step: ${nLatency} flows [wait 1 s, list_directory] one at a time, then ${nLatency} at once`);
    const waitFlow = (i) => ({ title: `bench: wait ${i}`, steps: [{ type: 'wait', seconds: 1 }, { type: 'tool', tool: 'list_directory', args: { path: work } }] });
    const latency = async (spacedMs) => {
      const before = (await api(brain, 'GET', '/api/taskflows?status=completed&limit=1')).count;
      const ids = [];
      for (let i = 0; i < nLatency; i++) {
        ids.push((await api(brain, 'POST', '/api/taskflows', waitFlow(i), 201)).id);
        if (spacedMs) await sleep(spacedMs);
      }
      await until(brain, 'completed', before + nLatency);
      const toStep = [];
      const toFire = [];
      for (const id of ids) {
        const f = await api(brain, 'GET', `/api/taskflows/${id}`);
        const { waited_until: deadline, fired_at: fired } = f.steps[0].result;
        toFire.push((fired - deadline) * 1000);
        toStep.push((f.steps[1].started_at - deadline) * 1000);
      }
      return { deadline_to_next_step: latency(toStep), deadline_to_wait_fired: latency(toFire) };
    };
    const spaced = await latency(50);
    const burst = await latency(0);
    await brain.stop();
    brain = null;

    log(`cold starts: a home without flows, one with ${nWaiting} waiting, the worked one; ${restarts} each, alternated`);
    const cold = { empty: [], waiting: [], worked: [] };
    const order = Object.keys(cold);
    for (let i = 0; i < restarts; i++) {
      // Each round in another order, so no home always starts right after the same one.
      for (let j = 0; j < order.length; j++) {
        const k = order[(i + j) % order.length];
        cold[k].push(await coldStart(root, runtime, homes[k]));
      }
    }
    const coldOf = (k) => ({ wall_ms: summary(cold[k].map((c) => c.ms)), cpu_ms: summary(cold[k].map((c) => c.cpuMs)) });
    brain = await settled(root, runtime, homes.waiting);
    const rssRestarted = memoryOf(brain.child.pid);
    const stillWaiting = (await api(brain, 'GET', '/api/taskflows?status=waiting&limit=1')).count;

    return {
      setup: { client: 'sequential fetch (keep-alive) in the bench process, same machine, unpinned', store: 'SqliteStore, synchronous=FULL, group commit', max_running: 4, rss: '1 s after start or after the last change' },
      baseline: { idle_rss: idleRss, health_idle: latency(healthIdle) },
      step_overhead: { branch_noop: branches, branch_noop_tenth: shortBranches, list_directory: tools },
      deadline_to_step: { wait_seconds: 1, one_at_a_time: spaced, at_once: burst },
      waiting_flows: {
        flows: nWaiting,
        rss_idle_before: idleRss,
        rss_with_them: rssWaiting,
        rss_after_restart_with_them: rssRestarted,
        still_waiting_after_restarts: stillWaiting,
        cold_start: { without_flows: coldOf('empty'), with_them_waiting: coldOf('waiting'), after_the_step_runs: coldOf('worked') },
      },
      targets: {
        branch_steps_per_s: { target: 'informational', value: branches.steps_per_s, pass: null },
        deadline_to_step_p99_ms: { target: 'informational', value: spaced.deadline_to_next_step.p99_ms, pass: null },
        cold_start_cpu_with_waiting_over_without: { target: 'informational', value: round(percentile(cold.waiting.map((c) => c.cpuMs), 50) / percentile(cold.empty.map((c) => c.cpuMs), 50), 2), pass: null },
      },
    };
  } finally {
    await brain?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
