// Shared by bench sections: start the built brain (dist/svc.mjs) the way `svc start` and the systemd
// unit do, and a baseline script the same way; read a process's memory from /proc, percentiles, free ports.
import { build } from 'esbuild';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import { join } from 'node:path';

/** Runtime flags and environment the brain is launched with (cli/brain-runtime.ts, compiled here). */
export async function brainRuntime(root) {
  const out = await build({ entryPoints: [join(root, 'cli/brain-runtime.ts')], bundle: true, write: false, format: 'esm', platform: 'node', logLevel: 'warning' });
  const mod = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
  return { flags: [...mod.BRAIN_NODE_FLAGS], env: { ...mod.BRAIN_ENV } };
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** VmRSS, RssAnon, RssFile of a live process, in MiB. */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const mib = (field) => Math.round((kib(field) / 1024) * 10) / 10;
  return { rss_mib: mib('VmRSS'), rss_anon_mib: mib('RssAnon'), rss_file_mib: mib('RssFile') };
}

let clockTicks = null;

/** utime + stime of /proc/<pid>/stat, every thread: counted in clock ticks (10 ms at CLK_TCK 100). */
function tickCpuMs(pid) {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may itself hold spaces: state, ppid, ...
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

/** The scheduler's own run time of each thread (/proc/<pid>/task/<tid>/schedstat, ns), summed. */
function schedCpuMs(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch (err) {
      if (err.code !== 'ENOENT' && err.code !== 'ESRCH') throw err; // the thread ended in between
    }
  }
  return ns / 1e6;
}

/**
 * CPU time a live process has used so far, all threads, in ms, and where it was read. Unlike wall time
 * it moves much less when other processes load the machine. The scheduler's per-thread run time is exact
 * (ns); kernels without it (no CONFIG_SCHED_INFO) give only utime + stime, in clock ticks, which also
 * samples who ran at each tick: ±10 ms on a 140 ms start.
 */
export function cpuOf(pid) {
  if (existsSync(`/proc/${pid}/schedstat`)) return { ms: schedCpuMs(pid), clock: 'schedstat' };
  return { ms: tickCpuMs(pid), clock: 'stat ticks' };
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export const round = (n, digits = 1) => (n === null || n === undefined ? null : Math.round(n * 10 ** digits) / 10 ** digits);

/** Latencies in ms: runs, p50, p99 and the worst. */
export const latency = (values) => ({ runs: values.length, p50_ms: round(percentile(values, 50), 2), p99_ms: round(percentile(values, 99), 2), max_ms: round(Math.max(...values), 2) });

export function summary(values, digits = 1) {
  return { runs: values.length, median: round(percentile(values, 50), digits), p90: round(percentile(values, 90), digits), min: round(Math.min(...values), digits), max: round(Math.max(...values), digits) };
}

/** Collects a child's stderr and exit code; `stop()` sends SIGTERM and resolves with the exit code. */
function watch(child) {
  const state = { stderr: '', exited: null };
  child.stderr.on('data', (d) => (state.stderr += d));
  // A child killed by a signal exits with code null: keep the signal so the exit is still seen.
  child.on('exit', (code, signal) => (state.exited = code ?? signal));
  state.stop = () =>
    new Promise((resolve) => {
      if (state.exited !== null) return resolve(state.exited);
      child.once('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });
  return state;
}

/**
 * Polls GET <url>/health every 2 ms until it answers 200 and resolves with the milliseconds since
 * `t0` (the spawn). Every process whose start-up the bench times is waited for by this one loop.
 */
/**
 * Polls GET <url>/health every `everyMs` until it answers 200; resolves with the ms since `t0`. Throws
 * when `down()` gives a reason (the process exited) or after `timeoutMs`, with `detail()` appended.
 */
export async function pollHealth(url, { t0 = performance.now(), down = () => null, detail = () => '', timeoutMs = 30_000, everyMs = 2, what = 'brain' } = {}) {
  for (;;) {
    const why = down();
    if (why) throw new Error(why);
    if (performance.now() - t0 > timeoutMs) throw new Error(`${what} not healthy within ${timeoutMs} ms: ${detail()}`);
    try {
      const res = await fetch(`${url}/health`);
      await res.arrayBuffer();
      if (res.status === 200) return performance.now() - t0;
    } catch (err) {
      // Not listening yet: fetch fails with a TypeError (connection refused or reset); anything else is a bug.
      if (!(err instanceof TypeError)) throw err;
    }
    await sleep(everyMs);
  }
}

const healthyAfter = (url, t0, state, { what, timeoutMs }) =>
  pollHealth(url, { t0, what, timeoutMs, detail: () => state.stderr, down: () => (state.exited !== null ? `${what} exited with ${state.exited}: ${state.stderr}` : null) });

/**
 * Spawns `node <flags> dist/svc.mjs serve --port <port>` on `home` and resolves once GET /health has
 * answered 200 (polled every 2 ms), with the time from spawn to that answer (startMs) and the CPU time
 * the brain had used by then (startCpu: { ms, clock }).
 */
export async function startBrain(root, { home, port, runtime, token, env = {}, timeoutMs = 30_000 }) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [...runtime.flags, join(root, 'dist/svc.mjs'), 'serve', '--port', String(port)], {
    env: { ...process.env, ...runtime.env, SVC_HOME: home, SVC_LOG_LEVEL: 'warn', SVC_API_TOKEN: token ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const state = watch(child);
  const url = `http://127.0.0.1:${port}`;
  const startMs = await healthyAfter(url, t0, state, { what: 'brain', timeoutMs });
  return { child, url, startMs, startCpu: cpuOf(child.pid), stop: state.stop };
}

/**
 * Bundles `entry` the way build.mjs bundles dist/svc.mjs (one minified ESM file for node20, with a
 * `require` for the CommonJS dependencies inside) to `outfile`, so a baseline loads its code as the
 * brain does: one file, no module resolution through node_modules at start-up.
 */
export async function bundleFixture(entry, outfile) {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    banner: { js: "import { createRequire as __benchCreateRequire } from 'node:module';\nconst require = __benchCreateRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  return outfile;
}

/**
 * Spawns `node <flags> <script> <port>` exactly as startBrain spawns the brain (same flags, environment
 * and stdio) and resolves at its first GET /health 200, timed by the same loop. For baselines such as
 * fixtures/bare-fastify.mjs, which take their port as the first argument.
 */
export async function startScript(script, { port, runtime, timeoutMs = 30_000 }) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [...runtime.flags, script, String(port)], { env: { ...process.env, ...runtime.env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const state = watch(child);
  const url = `http://127.0.0.1:${port}`;
  const startMs = await healthyAfter(url, t0, state, { what: script, timeoutMs });
  return { child, url, startMs, startCpu: cpuOf(child.pid), stop: state.stop };
}

/**
 * Spawns `node dist/svc.mjs serve` as a terminal, a container or a process manager runs it: no runtime
 * flags, none of cli/brain-runtime.ts's variables. It re-executes itself with them (cli/reexec.ts) unless
 * `reexec` is false (SVC_BRAIN_RUNTIME=1, how it ran before it did). Resolves at the first /health 200
 * with the pid of the process that serves (brain.pid) and of the one that was started.
 */
export async function startServe(root, runtime, { home, port, reexec = true, timeoutMs = 30_000 }) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !(k in runtime.env) && k !== 'SVC_BRAIN_RUNTIME' && k !== 'NODE_OPTIONS'));
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(root, 'dist/svc.mjs'), 'serve', '--port', String(port)], {
    env: { ...env, SVC_HOME: home, SVC_LOG_LEVEL: 'warn', SVC_API_TOKEN: '', ...(reexec ? {} : { SVC_BRAIN_RUNTIME: '1' }) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const state = watch(child);
  const startMs = await healthyAfter(`http://127.0.0.1:${port}`, t0, state, { what: 'svc serve', timeoutMs });
  const brainPid = Number(readFileSync(join(home, 'brain.pid'), 'utf8').split('\n')[0]);
  return { startMs, brainPid, startedPid: child.pid, stop: state.stop };
}

/**
 * Pins servers to the last core and this process (the load generator) to the others, so the two do
 * not fight over a core; returns { serverCpu, pin(pid), undo() }, or null without taskset or a 2nd core.
 */
export function pinning() {
  const n = cpus().length;
  if (n < 2) return null;
  try {
    const before = execFileSync('taskset', ['-p', String(process.pid)], { encoding: 'utf8' }).trim().split(/\s+/).at(-1);
    execFileSync('taskset', ['-a', '-p', '-c', `0-${n - 2}`, String(process.pid)], { stdio: 'ignore' });
    return {
      serverCpu: String(n - 1),
      pin: (pid) => execFileSync('taskset', ['-a', '-p', '-c', String(n - 1), String(pid)], { stdio: 'ignore' }),
      undo: () => execFileSync('taskset', ['-a', '-p', before, String(process.pid)], { stdio: 'ignore' }),
    };
  } catch (err) {
    if (err.code === 'ENOENT') return null; // no taskset (util-linux) here
    throw err;
  }
}
