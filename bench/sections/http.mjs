// GET /health throughput of the built brain against a bare fastify hello-world measured in the same
// run (autocannon, programmatic API; both servers are child processes started with the brain's runtime
// flags). The brain's number includes everything every request pays for: the 503-while-stopping hook,
// auth routing, metrics, response schema.
// On a 2-core machine an unpinned run measured bare fastify anywhere from 28k to 95k req/s, because
// the load generator and the server fight over the cores. So, where taskset exists and there are two
// cores or more, the servers run on the last core and autocannon (this process) on the others, and
// bare and brain alternate for several rounds; the ratio is of the medians.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), connections, durationS, warmupS, rounds }
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { brainRuntime, freePort, percentile, pinning, round, startBrain } from '../lib/brain.mjs';

const TARGET_RATIO = 0.85;

async function startBare(root, runtime) {
  const child = spawn(process.execPath, [...runtime.flags, join(root, 'bench/fixtures/bare-fastify.mjs')], { env: { ...process.env, ...runtime.env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) => resolve(Number(line)));
    child.once('exit', (code) => reject(new Error(`bare fastify exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => new Promise((r) => (child.exitCode !== null ? r() : (child.once('exit', r), child.kill('SIGTERM')))) };
}

async function load(url, connections, duration) {
  const r = await autocannon({ url: `${url}/health`, connections, duration });
  return {
    requests_per_s: round(r.requests.average, 0),
    latency_ms: { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max },
    total: r.requests.total,
    non_2xx: r.non2xx,
    errors: r.errors,
  };
}

const median = (runs) => percentile(runs.map((r) => r.requests_per_s), 50);

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[http] ${m}\n`));
  const connections = ctx.connections ?? 50;
  const durationS = ctx.durationS ?? 3;
  const warmupS = ctx.warmupS ?? 1;
  const rounds = ctx.rounds ?? 5;
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'http-'));
  const runtime = await brainRuntime(root);
  const pins = pinning();
  const servers = [];
  try {
    const bare = await startBare(root, runtime);
    const brain = await startBrain(root, { home: join(dir, 'home'), port: await freePort(), runtime });
    servers.push(bare, brain);
    pins?.pin(bare.pid);
    pins?.pin(brain.child.pid);
    log(`warm-up ${warmupS} s each, then ${rounds} alternating rounds of ${durationS} s at ${connections} connections${pins ? `, servers on cpu ${pins.serverCpu}` : ', unpinned'}`);
    await load(bare.url, connections, warmupS);
    await load(brain.url, connections, warmupS);
    const bareRuns = [];
    const brainRuns = [];
    for (let i = 0; i < rounds; i++) {
      bareRuns.push(await load(bare.url, connections, durationS));
      brainRuns.push(await load(brain.url, connections, durationS));
    }
    await Promise.all(servers.splice(0).map((s) => s.stop()));
    log('brain with default node flags (one round)');
    const plain = await startBrain(root, { home: join(dir, 'home'), port: await freePort(), runtime: { flags: [], env: {} } });
    servers.push(plain);
    pins?.pin(plain.child.pid);
    await load(plain.url, connections, warmupS);
    const brainDefaultFlags = await load(plain.url, connections, durationS);
    const ratio = round(median(brainRuns) / median(bareRuns), 3);
    return {
      setup: { connections, duration_s: durationS, warmup_s: warmupS, rounds, runtime, load_generator: 'autocannon in the bench process, same machine', pinned: pins ? `servers on cpu ${pins.serverCpu}, autocannon on the others` : 'no' },
      bare_fastify: { requests_per_s_median: median(bareRuns), rounds: bareRuns },
      brain: { requests_per_s_median: median(brainRuns), rounds: brainRuns },
      brain_default_node_flags: brainDefaultFlags,
      brain_over_bare: ratio,
      brain_over_bare_per_round: brainRuns.map((b, i) => round(b.requests_per_s / bareRuns[i].requests_per_s, 3)),
      targets: { health_vs_bare_fastify: { target: `>= ${TARGET_RATIO}`, value: ratio, pass: ratio >= TARGET_RATIO } },
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    pins?.undo();
    rmSync(dir, { recursive: true, force: true });
  }
}
