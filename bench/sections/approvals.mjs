// The approvals queue under a backlog (docs/approvals.md): GET /api/approvals with 10k pending requests
// (limit=100, limit=500, and the default limit filtered by one session), and the round trip of
// POST /api/approvals/{id}/approve (the held run_command runs `true`: claim, spawn, record, answer)
// and of /reject (no tool: the queue's own cost). Baseline in the same run, interleaved with the list
// reads: GET /health on the same brain.
// The backlog is written straight into the store of a stopped brain (one transaction, with the
// brain's own SqliteStore, bundled here) rather than held call by call through a model: 10k turns would
// take minutes and measure the agent, not the queue. The rows are what the approvals capability
// itself writes (a held run_command in a granted folder, sessions that have ended), so the brain
// started on that home lists, counts and resolves them as it would its own.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), pending, reads, resolves }
import { build } from 'esbuild';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brainRuntime, freePort, percentile, round, startBrain, latency } from '../lib/brain.mjs';

const TOKEN = 'bench-token-approvals-0123456789';
const SESSIONS = 50;

async function loadStore(root, dir) {
  const outfile = join(dir, 'sqlite-store.mjs');
  await build({ entryPoints: [join(root, 'daemon/store/sqlite-store.ts')], outfile, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'warning' });
  return import(pathToFileURL(outfile).href);
}

/** `n` pending run_command requests in one transaction, oldest first, spread over SESSIONS ended sessions. */
async function writeBacklog(SqliteStore, file, n, cwd) {
  const store = new SqliteStore(file);
  const now = Date.now() / 1000;
  const args = JSON.stringify({ argv: ['true'], cwd });
  try {
    await store.write((db) => {
      for (let i = 0; i < n; i++) {
        db.run(
          "INSERT INTO approval_requests (request_id, session_id, turn_id, tool_name, args, safety_level, created_at, status) VALUES (?, ?, ?, 'run_command', ?, 'privileged', ?, 'pending')",
          [randomUUID(), `ses_bench${i % SESSIONS}`, `turn_bench${i}`, args, now - (n - i) / 1000],
        );
      }
    });
  } finally {
    store.close();
  }
}

const auth = { authorization: `Bearer ${TOKEN}` };

/** Milliseconds of one request, body read; throws on an unexpected status. */
async function timed(url, init, expect) {
  const t0 = performance.now();
  const res = await fetch(url, init);
  const body = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== expect) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${body.slice(0, 200)}`);
  return { ms, body };
}


export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[approvals] ${m}\n`));
  const pending = ctx.pending ?? 10_000;
  const reads = ctx.reads ?? 300;
  const resolves = ctx.resolves ?? 200;
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'approvals-'));
  const home = join(dir, 'home');
  const work = join(dir, 'work');
  mkdirSync(work);
  const cwd = realpathSync(work);
  const runtime = await brainRuntime(root);
  let brain = null;
  try {
    // A first start creates brain.db with every migration; the backlog goes in while it is stopped.
    brain = await startBrain(root, { home, port: await freePort(), runtime, token: TOKEN });
    await timed(`${brain.url}/api/grants`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ path: cwd, write: true }) }, 201);
    await brain.stop();
    brain = null;
    const { SqliteStore } = await loadStore(root, dir);
    const w0 = performance.now();
    await writeBacklog(SqliteStore, join(home, 'brain.db'), pending, cwd);
    log(`${pending} pending requests written in ${Math.round(performance.now() - w0)} ms`);
    brain = await startBrain(root, { home, port: await freePort(), runtime, token: TOKEN });

    const first = JSON.parse((await timed(`${brain.url}/api/approvals?limit=500`, { headers: auth }, 200)).body);
    if (first.count !== 500) throw new Error(`expected 500 listed, got ${first.count}`);
    const gauge = Number(/^svc_supervisor_approval_queue (\S+)$/m.exec((await timed(`${brain.url}/metrics`, {}, 200)).body)?.[1]);
    const session = first.approvals[0].session_id;

    log(`${reads} rounds of GET /health, /api/approvals?limit=100, ?limit=500, ?session_id=…`);
    const cases = {
      health: [`${brain.url}/health`, {}],
      list_100: [`${brain.url}/api/approvals?limit=100`, { headers: auth }],
      list_500: [`${brain.url}/api/approvals?limit=500`, { headers: auth }],
      list_one_session: [`${brain.url}/api/approvals?session_id=${session}`, { headers: auth }],
    };
    const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (let i = 0; i < 20; i++) for (const [url, init] of Object.values(cases)) await timed(url, init, 200); // warm-up
    for (let i = 0; i < reads; i++) {
      for (const [name, [url, init]] of Object.entries(cases)) samples[name].push((await timed(url, init, 200)).ms);
    }

    log(`${resolves} approvals and ${resolves} rejections, one at a time, oldest first`);
    const ids = JSON.parse((await timed(`${brain.url}/api/approvals?limit=500`, { headers: auth }, 200)).body).approvals.map((a) => a.request_id);
    const approveMs = [];
    const rejectMs = [];
    for (let i = 0; i < resolves; i++) {
      approveMs.push((await timed(`${brain.url}/api/approvals/${ids[2 * i]}/approve`, { method: 'POST', headers: auth }, 200)).ms);
      rejectMs.push((await timed(`${brain.url}/api/approvals/${ids[2 * i + 1]}/reject`, { method: 'POST', headers: auth }, 200)).ms);
    }
    const left = Number(/^svc_supervisor_approval_queue (\S+)$/m.exec((await timed(`${brain.url}/metrics`, {}, 200)).body)?.[1]);

    const read = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, latency(v)]));
    return {
      setup: { pending, sessions: SESSIONS, reads_per_case: reads, resolves, client: 'sequential fetch (keep-alive) in the bench process, same machine, unpinned', tool: 'run_command argv ["true"] in a granted folder' },
      gauge_at_start: gauge,
      gauge_after: left,
      health: read.health,
      list_limit_100: read.list_100,
      list_limit_500: read.list_500,
      list_one_session_limit_100: read.list_one_session,
      approve_round_trip: latency(approveMs),
      reject_round_trip: latency(rejectMs),
      list_100_p99_over_health_p99: round(read.list_100.p99_ms / read.health.p99_ms, 1),
      targets: {
        list_100_p99_with_10k_pending: { target: 'informational', value: read.list_100.p99_ms, pass: null },
        approve_p99: { target: 'informational', value: round(percentile(approveMs, 99), 2), pass: null },
      },
    };
  } finally {
    await brain?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
