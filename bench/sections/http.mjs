// GET /health throughput of the built brain against a bare fastify hello-world measured in the same
// run (autocannon, programmatic API; both servers are child processes started with the brain's runtime
// flags). The brain's number includes everything every request pays for: the 503-while-stopping hook,
// auth routing, metrics, response schema.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), connections, durationS, warmupS }
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { brainRuntime, freePort, round, startBrain } from '../lib/brain.mjs';

const TARGET_RATIO = 0.85;

async function startBare(root, runtime) {
  const child = spawn(process.execPath, [...runtime.flags, join(root, 'bench/fixtures/bare-fastify.mjs')], { env: { ...process.env, ...runtime.env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) => resolve(Number(line)));
    child.once('exit', (code) => reject(new Error(`bare fastify exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))) };
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

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[http] ${m}\n`));
  const connections = ctx.connections ?? 50;
  const durationS = ctx.durationS ?? 5;
  const warmupS = ctx.warmupS ?? 1;
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'http-'));
  const runtime = await brainRuntime(root);
  const measure = async (name, server) => {
    try {
      log(`${name}: warm-up ${warmupS} s, then ${durationS} s at ${connections} connections`);
      await load(server.url, connections, warmupS);
      return await load(server.url, connections, durationS);
    } finally {
      await server.stop();
    }
  };
  try {
    const bare = await measure('bare fastify', await startBare(root, runtime));
    const brain = await measure('brain', await startBrain(root, { home: join(dir, 'home'), port: await freePort(), runtime }));
    const brainDefaultFlags = await measure('brain, default node flags', await startBrain(root, { home: join(dir, 'home'), port: await freePort(), runtime: { flags: [], env: {} } }));
    const ratio = round(brain.requests_per_s / bare.requests_per_s, 3);
    return {
      setup: { connections, duration_s: durationS, warmup_s: warmupS, runtime, load_generator: 'autocannon in the bench process, same machine' },
      bare_fastify: bare,
      brain,
      brain_default_node_flags: brainDefaultFlags,
      brain_over_bare: ratio,
      targets: { health_vs_bare_fastify: { target: `>= ${TARGET_RATIO}`, value: ratio, pass: ratio >= TARGET_RATIO } },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
