// Cold start and idle memory of the built brain, launched as `svc start` and systemd launch it
// (cli/brain-runtime.ts flags and environment), and as `svc serve` started bare (a terminal, a
// container), which re-executes itself with that runtime; for comparison, bare `svc serve` without
// the re-exec.
// Baseline in the same run: a bare fastify serving GET /health and nothing else
// (fixtures/bare-fastify.mjs, bundled like dist/svc.mjs), started the same way — same flags and
// environment, spawn until the first GET /health 200 by the same loop, RSS read after the same idle
// time. Brain and bare alternate (A B A B ...), so a change of load on the machine hits both; the
// same build measured a 326 ms and a 556 ms median cold start at different hours, so the brain/bare
// ratios are what show a regression, the absolute numbers only the machine's mood. Also a bare
// `node -e` with the same flags, idle as long. The CPU time each process had used at its first 200
// is reported next to the wall time: on a loaded machine it is the steadier of the two.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), runs, restarts, serveRuns, idleMs }
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { brainRuntime, bundleFixture, freePort, memoryOf, percentile, round, sleep, startBrain, startScript, startServe, summary } from '../lib/brain.mjs';

const TARGET_COLD_START_MS = 400;
const TARGET_IDLE_RSS_MIB = 70;

async function idleNode(runtime, idleMs) {
  const child = spawn(process.execPath, [...runtime.flags, '-e', 'setInterval(() => {}, 1 << 30)'], { env: { ...process.env, ...runtime.env }, stdio: 'ignore' });
  await sleep(idleMs);
  const memory = memoryOf(child.pid);
  child.kill('SIGKILL');
  return memory;
}

/** One start of `start()`: time and CPU time to the first /health 200, then memory after `idleMs` of idling. */
async function coldStart(start, idleMs) {
  const server = await start();
  try {
    await sleep(idleMs);
    return { ms: server.startMs, cpu: server.startCpu, memory: memoryOf(server.child.pid) };
  } finally {
    await server.stop();
  }
}

/** Brain over bare: the ratio of the medians, and the spread of the ratios of each A B pair. */
function ratio(brain, bare) {
  const perPair = brain.map((b, i) => b / bare[i]);
  return { of_medians: round(percentile(brain, 50) / percentile(bare, 50), 3), paired: summary(perPair, 3) };
}

const informational = (value) => ({ target: 'informational', value, pass: null });

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[startup] ${m}\n`));
  const runs = ctx.runs ?? 10;
  const idleMs = ctx.idleMs ?? 2000;
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'startup-'));
  const runtime = await brainRuntime(root);
  try {
    const bareScript = await bundleFixture(join(root, 'bench/fixtures/bare-fastify.mjs'), join(dir, 'bare-fastify.mjs'));
    const brain = [];
    const bareFastify = [];
    for (let i = 0; i < runs; i++) {
      log(`cold start ${i + 1}/${runs}: brain (fresh home), then bare fastify`);
      const home = join(dir, `home-${i}`);
      brain.push(await coldStart(async () => startBrain(root, { home, port: await freePort(), runtime }), idleMs));
      bareFastify.push(await coldStart(async () => startScript(bareScript, { port: await freePort(), runtime }), idleMs));
    }
    const restarts = [];
    for (let i = 0; i < (ctx.restarts ?? 5); i++) {
      log(`restart ${i + 1} (existing home)`);
      const restarted = await startBrain(root, { home: join(dir, 'home-0'), port: await freePort(), runtime });
      restarts.push(restarted.startMs);
      await restarted.stop();
    }
    const serveRuns = ctx.serveRuns ?? 3;
    const served = { brain: [], supervisor: [], cold: [] };
    const unflagged = { rss: [], cold: [] };
    for (let i = 0; i < serveRuns; i++) {
      log(`svc serve, bare ${i + 1}/${serveRuns} (re-executes with the runtime)`);
      const s = await startServe(root, runtime, { home: join(dir, `serve-${i}`), port: await freePort() });
      served.cold.push(s.startMs);
      await sleep(idleMs);
      served.brain.push(memoryOf(s.brainPid));
      if (s.brainPid !== s.startedPid) served.supervisor.push(memoryOf(s.startedPid));
      await s.stop();
      log(`svc serve, bare ${i + 1}/${serveRuns}, no re-exec (SVC_BRAIN_RUNTIME=1)`);
      const u = await startServe(root, runtime, { home: join(dir, `serve-plain-${i}`), port: await freePort(), reexec: false });
      unflagged.cold.push(u.startMs);
      await sleep(idleMs);
      unflagged.rss.push(memoryOf(u.brainPid));
      await u.stop();
    }
    log('bare node baseline');
    const bare = await idleNode(runtime, idleMs);
    const bareDefault = await idleNode({ flags: [], env: {} }, idleMs);
    const field = (runs, name) => runs.map((r) => r.memory[name]);
    const memorySummary = (runs) => ({ rss: summary(field(runs, 'rss_mib')), rss_anon: summary(field(runs, 'rss_anon_mib')), rss_file: summary(field(runs, 'rss_file_mib')) });
    const coldSummary = summary(brain.map((r) => r.ms));
    const cpu = (runs) => runs.map((r) => r.cpu.ms);
    const clocks = [...new Set([...brain, ...bareFastify].map((r) => r.cpu.clock))].join(', ');
    const rss = summary(field(brain, 'rss_mib'));
    const over = {
      cold_start: ratio(brain.map((r) => r.ms), bareFastify.map((r) => r.ms)),
      cold_start_cpu: ratio(cpu(brain), cpu(bareFastify)),
      idle_rss: ratio(field(brain, 'rss_mib'), field(bareFastify, 'rss_mib')),
      idle_rss_anon: ratio(field(brain, 'rss_anon_mib'), field(bareFastify, 'rss_anon_mib')),
    };
    return {
      runtime,
      cold_start_ms: { ...coldSummary, what: 'spawn of dist/svc.mjs serve on a fresh $SVC_HOME until the first GET /health 200 (first run: creates keys, database, migrations)' },
      cold_start_cpu_ms: { ...summary(cpu(brain)), clock: clocks, what: 'CPU time of all its threads the brain had used at its first GET /health 200 (clock: /proc/<pid>/task/*/schedstat, exact; or /proc/<pid>/stat utime + stime, in clock ticks); load on the machine moves it much less than the wall time' },
      restart_ms: { ...summary(restarts), what: 'the same on an existing $SVC_HOME' },
      idle_memory_mib: {
        ...memorySummary(brain),
        what: `/proc/<pid>/status ${idleMs} ms after the first /health 200`,
      },
      svc_serve: {
        brain_rss_mib: summary(served.brain.map((m) => m.rss_mib)),
        brain_rss_anon_mib: summary(served.brain.map((m) => m.rss_anon_mib)),
        supervisor_rss_mib: served.supervisor.length ? summary(served.supervisor.map((m) => m.rss_mib)) : null,
        supervisor_rss_anon_mib: served.supervisor.length ? summary(served.supervisor.map((m) => m.rss_anon_mib)) : null,
        cold_start_ms: summary(served.cold),
        without_reexec: { rss_mib: summary(unflagged.rss.map((m) => m.rss_mib)), rss_anon_mib: summary(unflagged.rss.map((m) => m.rss_anon_mib)), cold_start_ms: summary(unflagged.cold) },
        what: `bare \`svc serve\` (no flags, no MALLOC_*): the brain it re-executes, and the process that was started, which stays as a supervisor on Node without process.execve (none on Node >= 22.15: same pid); ${idleMs} ms after the first /health 200. without_reexec: SVC_BRAIN_RUNTIME=1, how svc serve ran before`,
      },
      bare_fastify: {
        cold_start_ms: summary(bareFastify.map((r) => r.ms)),
        cold_start_cpu_ms: summary(cpu(bareFastify)),
        idle_memory_mib: memorySummary(bareFastify),
        what: `fixtures/bare-fastify.mjs (GET /health only) bundled like dist/svc.mjs, spawned with the same flags and environment, timed to the first GET /health 200 by the same loop, memory ${idleMs} ms later; run right after each brain run (A B A B)`,
      },
      brain_over_bare_fastify: {
        ...over,
        what: 'of_medians: median of the brain over median of bare fastify; paired: brain over bare within each A B pair',
      },
      baseline_bare_node_mib: { same_flags: bare, default_flags: bareDefault, what: `node -e idle for ${idleMs} ms` },
      brain_over_bare_node_rss_mib: Math.round((rss.median - bare.rss_mib) * 10) / 10,
      targets: {
        cold_start_median_ms: { target: `<= ${TARGET_COLD_START_MS}`, value: coldSummary.median, pass: coldSummary.median <= TARGET_COLD_START_MS },
        idle_rss_median_mib: { target: `<= ${TARGET_IDLE_RSS_MIB}`, value: rss.median, pass: rss.median <= TARGET_IDLE_RSS_MIB },
        cold_start_vs_bare_fastify: informational(over.cold_start.of_medians),
        cold_start_cpu_vs_bare_fastify: informational(over.cold_start_cpu.of_medians),
        idle_rss_vs_bare_fastify: informational(over.idle_rss.of_medians),
        idle_rss_anon_vs_bare_fastify: informational(over.idle_rss_anon.of_medians),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
