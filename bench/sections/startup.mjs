// Cold start and idle memory of the built brain, launched as `svc start` and systemd launch it
// (cli/brain-runtime.ts flags and environment), and as `svc serve` started bare (a terminal, a
// container), which re-executes itself with that runtime; for comparison, bare `svc serve` without
// the re-exec. Baseline in the same run: a bare `node -e` process with the same flags, idle as long.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), runs, restarts, idleMs }
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { brainRuntime, freePort, memoryOf, sleep, startBrain, startServe, summary } from '../lib/brain.mjs';

const TARGET_COLD_START_MS = 400;
const TARGET_IDLE_RSS_MIB = 70;

async function idleNode(runtime, idleMs) {
  const child = spawn(process.execPath, [...runtime.flags, '-e', 'setInterval(() => {}, 1 << 30)'], { env: { ...process.env, ...runtime.env }, stdio: 'ignore' });
  await sleep(idleMs);
  const memory = memoryOf(child.pid);
  child.kill('SIGKILL');
  return memory;
}

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
    const cold = [];
    const idle = [];
    for (let i = 0; i < runs; i++) {
      log(`cold start ${i + 1}/${runs} (fresh home)`);
      const home = join(dir, `home-${i}`);
      const brain = await startBrain(root, { home, port: await freePort(), runtime });
      cold.push(brain.startMs);
      await sleep(idleMs);
      idle.push(memoryOf(brain.child.pid));
      await brain.stop();
    }
    const restarts = [];
    for (let i = 0; i < (ctx.restarts ?? 5); i++) {
      log(`restart ${i + 1} (existing home)`);
      const brain = await startBrain(root, { home: join(dir, 'home-0'), port: await freePort(), runtime });
      restarts.push(brain.startMs);
      await brain.stop();
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
    const rss = summary(idle.map((m) => m.rss_mib));
    const coldSummary = summary(cold);
    return {
      runtime,
      cold_start_ms: { ...coldSummary, what: 'spawn of dist/svc.mjs serve on a fresh $SVC_HOME until the first GET /health 200 (first run: creates keys, database, migrations)' },
      restart_ms: { ...summary(restarts), what: 'the same on an existing $SVC_HOME' },
      idle_memory_mib: {
        rss: rss,
        rss_anon: summary(idle.map((m) => m.rss_anon_mib)),
        rss_file: summary(idle.map((m) => m.rss_file_mib)),
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
      baseline_bare_node_mib: { same_flags: bare, default_flags: bareDefault, what: `node -e idle for ${idleMs} ms` },
      brain_over_bare_node_rss_mib: Math.round((rss.median - bare.rss_mib) * 10) / 10,
      targets: {
        cold_start_median_ms: { target: `<= ${TARGET_COLD_START_MS}`, value: coldSummary.median, pass: coldSummary.median <= TARGET_COLD_START_MS },
        idle_rss_median_mib: { target: `<= ${TARGET_IDLE_RSS_MIB}`, value: rss.median, pass: rss.median <= TARGET_IDLE_RSS_MIB },
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
