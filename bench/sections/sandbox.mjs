// The skill sandbox in its worker pool (skills/sandbox-pool.ts; docs/skills.md "Where skills run"),
// with the built worker (dist/sandbox-worker.mjs) and the pool and sandbox modules bundled here:
//  - cold start: a fresh pool's first run of a one-line skill (worker start, bundle load, QuickJS's
//    WebAssembly compiled and instantiated, the run), and the first runSkill of a fresh process in its
//    own thread (a child: QuickJS loads once per process);
//  - steady runs/s of a small skill (main(params) returning a number): through a warm pool of one
//    worker, one run at a time, and through a pool of `streams` workers with as many runs at once;
//  - memory per concurrent run: a child process (launched with the brain's flags and environment,
//    cli/brain-runtime.ts: glibc's arenas decide how much a thread gives back) starts N runs at once,
//    each holding a call_tool answer open, and reports its RSS then minus its RSS before the pool's
//    first run (modules loaded, gc'd), and after close(); and what a 64 MiB memory bomb leaves behind:
//    RSS after the bomb run through the pool with the default recycle bound (the worker idles on), after
//    close(), through a pool that recycles past 32 MiB, and with runSkill in the child's own thread.
// Baselines in the same run: the same JavaScript run by node:vm in this thread (a new context per run),
// runSkill in this thread (the sandbox without the thread hop), a bare worker_threads round trip (start,
// one message each way) and bare workers idling in a child, for the memory.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), coldRuns, steadyRuns, concurrency }
//   node bench/sections/sandbox.mjs child <mode> <n> <parts.mjs> <worker url>   (the memory child)
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import { brainRuntime } from '../lib/brain.mjs';

const MiB = 1024 * 1024;
const SMALL = 'function main(p) { let s = 0; for (let i = 0; i < p.n; i++) s += i; return s }';
const HOLDING = 'async function main() { const a = []; for (let i = 0; i < 1000; i++) a.push({ i }); await call_tool("hold", {}); return a.length }';
const BOMB = 'let a = []; for (;;) a.push("x".repeat(1000) + a.length)';
const ECHO_WORKER = "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', (m) => parentPort.postMessage(m));\n";

const round = (n, digits = 1) => (n === null || n === undefined ? null : Math.round(n * 10 ** digits) / 10 ** digits);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
const mib = (bytes) => round(bytes / MiB, 1);

/** An answering host: call_tool("hold") waits until `release()`; `holding` counts the calls waiting. */
function holdingHost() {
  const state = { holding: 0, release: () => undefined };
  const released = new Promise((resolve) => (state.release = resolve));
  state.host = {
    tools: ['hold'],
    callTool: async () => {
      state.holding++;
      await released;
      return 'ok';
    },
    http: () => Promise.reject(new Error('no network in the bench')),
  };
  return state;
}
const plainHost = { tools: [], callTool: () => Promise.reject(new Error('no tools')), http: () => Promise.reject(new Error('no network')) };
const smallRun = { source: SMALL, params: { n: 100 }, limits: { wallMs: 5000 }, host: plainHost };

async function bundleParts(root, dir) {
  const entry = join(dir, 'parts.ts');
  writeFileSync(entry, `export { SandboxPool } from ${JSON.stringify(join(root, 'skills/sandbox-pool.ts'))};\nexport { runSkill } from ${JSON.stringify(join(root, 'skills/sandbox.ts'))};\n`);
  const outfile = join(dir, 'parts.mjs');
  await build({ entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'warning' });
  return outfile;
}

/** Milliseconds from `new Worker` to its first answer, then terminated. */
async function bareRoundTrip(file) {
  const t0 = performance.now();
  const worker = new Worker(file);
  await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.postMessage({ ping: 1 });
  });
  const ms = performance.now() - t0;
  await worker.terminate();
  return ms;
}

async function coldStarts(parts, workerUrl, echoFile, partsFile, runs, runtime) {
  const pool = [];
  const bare = [];
  const vmFirst = [];
  for (let i = 0; i < runs; i++) {
    const p = new parts.SandboxPool({ workerUrl });
    const t0 = performance.now();
    const out = await p.run(smallRun);
    pool.push(performance.now() - t0);
    await p.close();
    if (!out.ok) throw new Error(`cold run failed: ${JSON.stringify(out)}`);
    bare.push(await bareRoundTrip(echoFile));
    const t1 = performance.now();
    vm.runInNewContext(`${SMALL}; main({ n: 100 })`);
    vmFirst.push(performance.now() - t1);
  }
  const inThread = [];
  for (let i = 0; i < Math.min(runs, 5); i++) inThread.push(child(runtime, partsFile, workerUrl, 'cold-in-thread', 1).first_run_ms);
  return {
    pool_first_run_ms: { median: round(median(pool), 1), min: round(Math.min(...pool), 1), runs },
    in_thread_first_run_ms: { median: round(median(inThread), 1), min: round(Math.min(...inThread), 1), runs: inThread.length },
    baseline_bare_worker_round_trip_ms: { median: round(median(bare), 1), min: round(Math.min(...bare), 1) },
    baseline_vm_new_context_ms: { median: round(median(vmFirst), 2) },
  };
}

/** Runs/s of `n` runs made by `once()`, `streams` at a time. */
async function rate(n, streams, once) {
  let left = n;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: streams }, async () => {
      while (left-- > 0) await once();
    }),
  );
  return round((n * 1000) / (performance.now() - t0), 0);
}

async function steady(parts, workerUrl, echoFile, runs, streams) {
  const one = new parts.SandboxPool({ workerUrl });
  const many = new parts.SandboxPool({ workerUrl, size: streams });
  const echo = new Worker(echoFile);
  try {
    const check = async (p) => {
      const out = await p.run(smallRun);
      if (!out.ok) throw new Error(`steady run failed: ${JSON.stringify(out)}`);
    };
    await rate(streams * 2, streams, () => check(many));
    await check(one);
    const echoOnce = () => new Promise((resolve) => (echo.once('message', resolve), echo.postMessage({ source: SMALL })));
    return {
      pool_size_1_runs_per_s: await rate(runs, 1, () => check(one)),
      [`pool_size_${streams}_runs_per_s`]: await rate(runs, streams, () => check(many)),
      baseline_run_skill_in_thread_runs_per_s: await rate(runs, 1, () => parts.runSkill(smallRun)),
      baseline_vm_new_context_runs_per_s: await rate(runs, 1, async () => vm.runInNewContext(`${SMALL}; main({ n: 100 })`)),
      baseline_bare_worker_messages_per_s: await rate(runs * 10, 1, echoOnce),
    };
  } finally {
    await Promise.all([one.close(), many.close(), echo.terminate()]);
  }
}

/** One child process (the brain's runtime): its JSON answer. */
function child(runtime, partsFile, workerUrl, mode, n) {
  const args = [...runtime.flags, '--expose-gc', fileURLToPath(import.meta.url), 'child', mode, String(n), partsFile, workerUrl.href];
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...runtime.env } });
  if (r.status !== 0) throw new Error(`child ${mode} ${n}: exit ${r.status ?? r.signal}: ${r.stderr.slice(-500)}`);
  return JSON.parse(r.stdout);
}

function memory(runtime, partsFile, workerUrl, concurrency) {
  const perRun = {};
  for (const n of concurrency) {
    const pool = child(runtime, partsFile, workerUrl, 'pool', n);
    const inThread = child(runtime, partsFile, workerUrl, 'in-thread', n);
    const bare = child(runtime, partsFile, workerUrl, 'bare-workers', n);
    perRun[`n_${n}`] = {
      pool_mib_per_run: mib(pool.grown / n),
      pool_rss_after_close_minus_base_mib: mib(pool.after_close - pool.base),
      baseline_in_thread_mib_per_run: mib(inThread.grown / n),
      baseline_bare_worker_mib_each: mib(bare.grown / n),
    };
  }
  const bombPool = child(runtime, partsFile, workerUrl, 'bomb-pool', 1);
  const bombRecycled = child(runtime, partsFile, workerUrl, 'bomb-pool-recycle', 1);
  const bombThread = child(runtime, partsFile, workerUrl, 'bomb-in-thread', 1);
  return {
    per_concurrent_run: perRun,
    after_64mib_bomb: {
      heap_reported_mib: mib(bombPool.heap),
      pool_default_recycle_worker_idle_rss_mib: mib(bombPool.grown),
      pool_after_close_rss_mib: mib(bombPool.after_close - bombPool.base),
      pool_recycle_32mib_rss_mib: mib(bombRecycled.grown),
      baseline_in_thread_rss_mib: mib(bombThread.grown),
    },
  };
}

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[sandbox] ${m}\n`));
  const workerFile = join(root, 'dist/sandbox-worker.mjs');
  if (!existsSync(workerFile)) throw new Error('dist/sandbox-worker.mjs is missing: run `node build.mjs` first');
  const workerUrl = pathToFileURL(workerFile);
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'sandbox-'));
  try {
    const partsFile = await bundleParts(root, dir);
    const parts = await import(pathToFileURL(partsFile).href);
    const echoFile = join(dir, 'echo-worker.mjs');
    writeFileSync(echoFile, ECHO_WORKER);
    const streams = Math.max(1, Math.min(4, cpus().length));
    const runtime = await brainRuntime(root);
    log('cold starts');
    const cold = await coldStarts(parts, workerUrl, echoFile, partsFile, ctx.coldRuns ?? 9, runtime);
    log('steady runs');
    const rates = await steady(parts, workerUrl, echoFile, ctx.steadyRuns ?? 500, streams);
    log('memory (child processes)');
    const mem = memory(runtime, partsFile, workerUrl, ctx.concurrency ?? [1, 2, 4]);
    return { cold_start: cold, steady: rates, memory: mem };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ── The memory child ────────────────────────────────────────────────────────────────────────────────

const rss = () => {
  globalThis.gc?.();
  return process.memoryUsage().rss;
};
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (bounded) until `n` runs hold their call_tool open; a run that ended first is an error. */
async function held(state, runs, n) {
  const ended = [];
  for (const r of runs) void r.then((outcome) => ended.push(outcome));
  for (let i = 0; i < 3000 && state.holding < n && ended.length === 0; i++) await pause(10);
  if (state.holding < n) throw new Error(`${state.holding} of ${n} runs reached their host call; ended: ${JSON.stringify(ended)}`);
}

async function childMain([mode, count, partsFile, workerHref]) {
  const n = Number(count);
  const { SandboxPool, runSkill } = await import(pathToFileURL(partsFile).href);
  const workerUrl = new URL(workerHref);
  const holdRun = (host) => ({ source: HOLDING, params: {}, limits: { wallMs: 60_000 }, host });
  await pause(100);
  const base = rss();
  const out = { base };
  if (mode === 'cold-in-thread') {
    const t0 = performance.now();
    await runSkill(smallRun);
    out.first_run_ms = performance.now() - t0;
  } else if (mode === 'pool' || mode === 'in-thread') {
    const pool = new SandboxPool({ workerUrl, size: n });
    const state = holdingHost();
    const runs = Array.from({ length: n }, () => (mode === 'pool' ? pool.run(holdRun(state.host)) : runSkill(holdRun(state.host))));
    await held(state, runs, n);
    out.grown = rss() - base;
    state.release();
    await Promise.all(runs);
    await pool.close();
    await pause(200);
    out.after_close = rss();
  } else if (mode === 'bare-workers') {
    const file = join(fileURLToPath(new URL('.', pathToFileURL(partsFile))), 'echo-worker.mjs');
    const workers = Array.from({ length: n }, () => new Worker(file));
    await Promise.all(workers.map((w) => new Promise((resolve) => (w.once('message', resolve), w.postMessage(1)))));
    out.grown = rss() - base;
    await Promise.all(workers.map((w) => w.terminate()));
  } else if (mode.startsWith('bomb-')) {
    const bomb = { source: BOMB, params: {}, limits: { wallMs: 10_000, memoryBytes: 64 * MiB }, host: plainHost };
    const pool = new SandboxPool({ workerUrl, ...(mode === 'bomb-pool-recycle' ? { recycleBytes: 32 * MiB } : {}) });
    const outcome = mode === 'bomb-in-thread' ? await runSkill(bomb) : await pool.run(bomb);
    if (outcome.kill !== 'memory') throw new Error(`the bomb ended as ${JSON.stringify(outcome)}`);
    out.heap = pool.stats().lastHeapBytes;
    await pause(300);
    out.grown = rss() - base;
    await pool.close();
    await pause(300);
    out.after_close = rss();
  } else throw new Error(`unknown child mode ${mode}`);
  process.stdout.write(JSON.stringify(out));
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'child') await childMain(process.argv.slice(3));
