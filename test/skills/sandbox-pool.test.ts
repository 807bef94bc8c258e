// skills/sandbox-pool.ts with the built worker (.test-build/sandbox-worker.mjs, found by the default
// lookup): outcomes equal runSkill's; host calls cross the thread (http, call_tool, a PolicyRefusal
// stays a policy kill, an ApprovalPending a held run); a busy loop leaves this thread's event loop
// free; a worker whose WebAssembly memory grew past its bound is replaced; idle workers end; a worker
// terminated from outside or stuck past its wall time fails only its run; close() answers every run;
// no more than `size` runs at once and no more than `maxQueued` waiting; a busy worker keeps a process
// alive and an idle one does not (a child process that never closes its pool still exits). Fake
// workers (a few lines written to a temporary folder) stand for a worker stuck where no interrupt
// reaches, or one that throws.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { runSkill, type SkillOutcome, type SkillRun } from '../../skills/sandbox';
import { ApprovalPending, PolicyRefusal, type HttpRequest, type SkillHost } from '../../skills/host-functions';
import { SandboxPool, SandboxPoolClosed, SandboxPoolFull, findWorkerFile, type SandboxPoolOptions } from '../../skills/sandbox-pool';
import { repoRoot } from '../helpers/external-tools';

const MiB = 1024 * 1024;

const host = (over: Partial<SkillHost> = {}): SkillHost => ({
  tools: ['echo', 'hold', 'shell_free'],
  callTool: async (name, args) => ({ name, args }),
  http: async (request) => ({ status: 200, headers: { 'x-method': request.method }, body: request.url }),
  ...over,
});
const skill = (source: string, h: SkillHost = host(), limits: SkillRun['limits'] = { wallMs: 2000, memoryBytes: 16 * MiB }): SkillRun => ({ source, params: { city: 'Oslo', n: 2 }, limits, host: h });

function newPool(t: TestContext, options: SandboxPoolOptions = {}): SandboxPool {
  const pool = new SandboxPool(options);
  t.after(() => pool.close());
  return pool;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `ready()` every 20 ms, at most 250 times. */
async function until(what: string, ready: () => boolean): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if (ready()) return;
    await sleep(20);
  }
  assert.fail(`not reached: ${what}`);
}

/** A promise and its resolve, to hold a host call open until the test lets it go. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** A stand-in worker written to a temporary folder: `body` runs on each message. */
function fakeWorker(t: TestContext, body: string): URL {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sandbox-pool-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'worker.mjs');
  writeFileSync(file, `import { parentPort } from 'node:worker_threads';\nparentPort.on('message', (message) => { ${body} });\n`);
  return pathToFileURL(file);
}

const killOf = (out: SkillOutcome): string | undefined => (out.ok ? undefined : out.kill);

test('outcomes through the pool equal runSkill for the same skills', async (t) => {
  const pool = newPool(t);
  const same = [
    '1 + 1',
    'async function main(p) { log("city", p.city); return { city: p.city, twice: p.n * 2 } }',
    'set_result({ a: 1 }); 5',
    'async function main() { throw new TypeError("no such city") }',
    'let = ;',
    'const a = {}; a.a = a; a',
    'async function main() { await call_tool("shell", {}) }',
    'async function main() { const h = await http_get("https://api.example.com/a"); return [h.status, h.headers, h.body] }',
    'new Promise(() => {})',
  ];
  for (const source of same) assert.deepEqual(await pool.run(skill(source)), await runSkill(skill(source)), source);
  // Kills whose message depends on when the interrupt came: the same kill.
  for (const [source, wallMs] of [['let a = []; for (;;) a.push("x".repeat(1000) + a.length)', 5000], ['for (;;) {}', 200]] as const) {
    const limits = { wallMs, memoryBytes: 16 * MiB };
    assert.equal(killOf(await pool.run(skill(source, host(), limits))), killOf(await runSkill(skill(source, host(), limits))), source);
  }
});

test('host calls cross the thread: http and call_tool answered here, a refusal stays a policy kill, a held call a held run', async (t) => {
  const pool = newPool(t);
  const requests: HttpRequest[] = [];
  const recording = host({ http: async (request) => (requests.push(request), { status: 200, headers: {}, body: 'fetched' }) });
  const out = await pool.run(skill('async function main() { const t = await call_tool("echo", { x: 1 }); const h = await http_post("https://a.example.com", "raw"); return [t, h.body] }', recording));
  assert.deepEqual(out, { ok: true, result: [{ name: 'echo', args: { x: 1 } }, 'fetched'], logs: [] });
  assert.deepEqual(requests, [{ method: 'POST', url: 'https://a.example.com', body: 'raw' }]);

  const refused = host({ http: () => Promise.reject(new PolicyRefusal('10.0.0.1 is a private address')) });
  const policy = await pool.run(skill('async function main() { try { await http_get("https://x.example.com") } catch (e) {} return 1 }', refused));
  assert.deepEqual(policy, { ok: false, kill: 'policy', message: '10.0.0.1 is a private address', logs: [] });

  const holding = host({ callTool: (name) => Promise.reject(new ApprovalPending('req-7', name)) });
  const held = await pool.run(skill('async function main() { log("asking"); try { await call_tool("hold", {}) } catch (e) { return "went on" } }', holding));
  assert.deepEqual(held, { ok: false, held: { requestId: 'req-7', tool: 'hold' }, message: 'call_tool: "hold" is held for approval (request req-7)', logs: ['asking'] });

  const failing = host({ callTool: () => Promise.reject(new Error('tool failed')) });
  assert.deepEqual(await pool.run(skill('async function main() { try { await call_tool("echo") } catch (e) { return e.message } }', failing)), { ok: true, result: 'tool failed', logs: [] });

  const bigint = host({ callTool: async () => 10n });
  const source = 'async function main() { return await call_tool("echo", {}) }';
  assert.deepEqual(await pool.run(skill(source, bigint)), await runSkill(skill(source, bigint)));
});

test('a busy loop is a timeout in its worker while this thread goes on ticking', async (t) => {
  const pool = newPool(t);
  await pool.run(skill('1'));
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 5);
  t.after(() => clearInterval(ticker));
  const out = await pool.run(skill('while (true) {}', host(), { wallMs: 400 }));
  const pooledTicks = ticks;
  assert.equal(killOf(out), 'timeout');
  // The same loop in this thread: the interval cannot fire until it ends (at most the one tick due).
  ticks = 0;
  await runSkill(skill('while (true) {}', host(), { wallMs: 400 }));
  const inThreadTicks = ticks;
  assert.ok(pooledTicks >= 10, `${pooledTicks} ticks while the pool ran the loop`);
  assert.ok(inThreadTicks <= 1, `${inThreadTicks} ticks while runSkill ran it here`);
});

test('a worker whose WebAssembly memory grew past recycleBytes is ended after its run; the next run gets a fresh one', async (t) => {
  const pool = newPool(t, { recycleBytes: 48 * MiB });
  assert.deepEqual(await pool.run(skill('1')), { ok: true, result: 1, logs: [] });
  const small = pool.stats().lastHeapBytes!;
  assert.ok(small <= 48 * MiB, `${small}`);
  assert.deepEqual({ ...pool.stats(), lastHeapBytes: 0 }, { workers: 1, busy: 0, queued: 0, started: 1, lastHeapBytes: 0 });

  const bomb = await pool.run(skill('let a = []; for (;;) a.push("x".repeat(1000) + a.length)', host(), { wallMs: 5000, memoryBytes: 64 * MiB }));
  assert.equal(killOf(bomb), 'memory');
  assert.ok(pool.stats().lastHeapBytes! > 48 * MiB, `${pool.stats().lastHeapBytes}`);
  assert.equal(pool.stats().workers, 0, 'the bombed worker is gone');

  assert.deepEqual(await pool.run(skill('2')), { ok: true, result: 2, logs: [] });
  assert.equal(pool.stats().started, 2);
  assert.equal(pool.stats().lastHeapBytes, small, 'the new worker starts small again');
});

test('workers start on the first run and end after idleMs with nothing to do', async (t) => {
  const pool = newPool(t, { idleMs: 50 });
  assert.equal(pool.stats().workers, 0);
  await pool.run(skill('1'));
  assert.equal(pool.stats().workers, 1);
  await until('the idle worker ends', () => pool.stats().workers === 0);
  assert.deepEqual(await pool.run(skill('3')), { ok: true, result: 3, logs: [] });
  assert.equal(pool.stats().started, 2);
});

test('a worker terminated from outside fails only its run', async (t) => {
  const workers: Worker[] = [];
  const pool = newPool(t, { onWorker: (w) => workers.push(w) });
  const killing = host({ callTool: async () => (await workers[0]!.terminate(), 'never seen') });
  const out = await pool.run(skill('async function main() { return await call_tool("echo", {}) }', killing));
  assert.equal(killOf(out), 'error');
  assert.match(out.ok ? '' : out.message, /sandbox worker exited/);
  assert.deepEqual(await pool.run(skill('4')), { ok: true, result: 4, logs: [] });
  assert.equal(workers.length, 2);
});

test('a worker stuck past its wall time and grace is terminated and its run is a timeout; one that throws is an error', { timeout: 20_000 }, async (t) => {
  const stuck = newPool(t, { workerUrl: fakeWorker(t, 'for (;;) {}'), graceMs: 100 });
  const out = await stuck.run(skill('1', host(), { wallMs: 100 }));
  assert.equal(killOf(out), 'timeout');
  assert.match(out.ok ? '' : out.message, /its worker was ended/);
  assert.equal(stuck.stats().workers, 0);

  const throwing = newPool(t, { workerUrl: fakeWorker(t, 'throw new Error("boom")') });
  const failed = await throwing.run(skill('1'));
  assert.deepEqual(failed, { ok: false, kill: 'error', message: 'the sandbox worker failed: boom', logs: [] });
  assert.equal(throwing.stats().workers, 0);
});

test('close() answers the runs in flight and waiting, ends the workers, and refuses later runs', async (t) => {
  const pool = newPool(t);
  const held = gate();
  const called = gate();
  const waiting = host({ callTool: async () => (called.open(), await held.wait, 'late') });
  const inFlight = pool.run(skill('async function main() { return await call_tool("echo", {}) }', waiting));
  const queued = pool.run(skill('1'));
  await called.wait;
  await pool.close();
  held.open();
  const closed = { ok: false, kill: 'error', message: 'the sandbox pool closed before the run ended', logs: [] };
  assert.deepEqual(await inFlight, closed);
  assert.deepEqual(await queued, closed);
  assert.equal(pool.stats().workers, 0);
  await assert.rejects(pool.run(skill('1')), SandboxPoolClosed);
});

test('no more than `size` runs at once; past `maxQueued` waiting a run is refused', async (t) => {
  const pool = newPool(t, { size: 2, maxQueued: 3 });
  let active = 0;
  let most = 0;
  const release = gate();
  const counting = host({
    callTool: async () => {
      most = Math.max(most, ++active);
      await release.wait;
      active--;
      return 'done';
    },
  });
  const runs = [1, 2, 3, 4, 5].map(() => pool.run(skill('async function main() { return await call_tool("echo", {}) }', counting)));
  await assert.rejects(pool.run(skill('1')), SandboxPoolFull);
  await until('two runs are in their host call', () => active === 2);
  assert.deepEqual({ workers: pool.stats().workers, busy: pool.stats().busy, queued: pool.stats().queued }, { workers: 2, busy: 2, queued: 3 });
  release.open();
  for (const out of await Promise.all(runs)) assert.deepEqual(out, { ok: true, result: 'done', logs: [] });
  assert.equal(most, 2);
  assert.ok(pool.stats().workers <= 2);
});

test('the default worker lookup climbs from this module to the built worker, and says where it looked when there is none', (t) => {
  assert.match(findWorkerFile(import.meta.url).pathname, /sandbox-worker\.mjs$/);
  const dir = mkdtempSync(join(tmpdir(), 'svc-no-worker-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.throws(() => findWorkerFile(pathToFileURL(join(dir, 'a', 'b', 'x.mjs')).href), /sandbox-worker\.mjs is not next to/);
});

test('a process that never closes its pool waits for its run, then exits: a busy worker is referenced, an idle one is not', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pool-exit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const poolModule = join(dir, 'sandbox-pool.mjs');
  await build({ entryPoints: [join(repoRoot(), 'skills/sandbox-pool.ts')], outfile: poolModule, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'warning' });
  const script = [
    `import { SandboxPool } from ${JSON.stringify(pathToFileURL(poolModule).href)};`,
    `const pool = new SandboxPool({ idleMs: 600000, workerUrl: new URL(${JSON.stringify(findWorkerFile(import.meta.url).href)}) });`,
    "const host = { tools: ['echo'], callTool: (name, args) => new Promise((resolve) => setTimeout(() => resolve(args), 50).unref()), http: () => Promise.reject(new Error('no network')) };",
    "const run = () => pool.run({ source: 'async function main() { return await call_tool(\"echo\", { n: 42 }) }', params: {}, host });",
    // The second run goes to the worker the first one left idle.
    'console.log(JSON.stringify([await run(), await run()]));',
  ].join('\n');
  // The host call's own timer is unreferenced: only the busy worker can keep the process waiting for it.
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(child.status, 0, `exit ${child.status ?? child.signal}: ${child.stderr}`);
  const ran = { ok: true, result: { n: 42 }, logs: [] };
  assert.deepEqual(JSON.parse(child.stdout), [ran, ran]);
});
