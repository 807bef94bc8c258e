// Federated memory sync (issue 15; docs/sync.md): what two brains on loopback cost each other. Brain B
// dials A's /sync through a counting TCP proxy in this process (bench/lib/tcp-proxy.mjs; pairing's
// `sync_url` names the proxy; A has no URL to dial B), so every byte of the link is counted, and each
// WebSocket frame is read for its type and a batch's seq (bench/lib/ws-tap.mjs: batches resent).
//  - initial sync: A holds 100k notes, 20k episodes and 50k triples written straight into its store
//    while it was stopped (bench/lib/memory-seed.mjs; the native insert rate of those rows is the
//    baseline). At its next start the sync capability gives each record an op (daemon/sync/backfill.ts,
//    transactions of 500), which goes on after /health answers: spawn to /health and to every op in
//    A's log, and a second start of the same home without the backfill. Then B, a fresh brain, pairs with A; the time
//    from POST /api/sync/pair on B until B's op log holds as many ops as A's (GET /api/sync/status
//    ops.total, every 100 ms; when it passed the last note and the last episode gives the per-tier
//    times) and its memory shows as many notes, episodes and triples (GET /api/memory/backend counts);
//    ops/s, bytes on the wire each way, bytes per op, frames by type, CPU ms and write syscalls and
//    bytes per op of both brains (/proc/<pid>/io), peak RSS of both (VmRSS every 200 ms, and VmHWM).
//  - steady state: 50 notes/s written on A for 20 s (timer-paced POST /api/memory/note); every 10th
//    note is watched on B with GET /api/memory/notes/:id polled every 5 ms, from A's 201 to B's 200
//    (and from the request's start): p50/p99 propagation; bytes per change; CPU % of both brains.
//  - partition: the proxy is cut (listener closed, connections destroyed: B's dials are refused), 10k
//    notes are written on each side (POST /api/memory/note, 16 at a time on each), the proxy heals and
//    POST /api/sync/now on B dials at once; the time until both brains hold every note, and the bytes.
//  - baseline: the same bytes as the initial sync streamed over one bare `ws` socket through the same
//    proxy, in 256 KiB frames with a window of 4 and an ack each (bench/fixtures/ws-ack.mjs), to a
//    server launched like the brain; and the native insert rate above.
// Sizes scale with `ctx.scale` or SVC_BENCH_SYNC_SCALE (0.1: 10k notes, 2k episodes, 5k triples, 1k
// notes a side in the partition, 8 s of steady writes) for quick trials.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), scale }
import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { streamFrames } from '../fixtures/ws-ack.mjs';
import { brainRuntime, cpuOf, freePort, latency, round, sleep, startBrain, startScript } from '../lib/brain.mjs';
import { cpuWindow, ioWindow, perOp, sampleRss } from '../lib/process-windows.mjs';
import { loadMemoryParts, noteText, seedMemory } from '../lib/memory-seed.mjs';
import { startTcpProxy } from '../lib/tcp-proxy.mjs';

const TOKEN = 'bench-token-sync-0123456789abcdef';
const FULL = { notes: 100_000, episodes: 20_000, triples: 50_000, partitionNotes: 10_000, steadySeconds: 20 };
const STEADY_HZ = 50;
const WATCH_EVERY = 10;
const WATCH_POLL_MS = 5;
const WRITERS = 16;
const BATCH_BYTES = 256 * 1024;

// ── HTTP against a brain ─────────────────────────────────────────────────────────────────────────

const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

/** One authenticated request; the parsed body, or a thrown error naming an unexpected status. */
async function api(brain, path, { method = 'GET', body, expect = [200, 201] } = {}) {
  const res = await fetch(`${brain.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!expect.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return { status: res.status, body: text === '' ? null : JSON.parse(text) };
}

/** Notes, episodes and triples in the brain's memory, and ops in its log. */
async function holdings(brain) {
  const [backend, status] = await Promise.all([api(brain, '/api/memory/backend'), api(brain, '/api/sync/status')]);
  const { notes, episodes, triples } = backend.body.counts;
  return { notes, episodes, triples, ops: status.body.ops.total };
}

const same = (a, b) => a.notes === b.notes && a.episodes === b.episodes && a.triples === b.triples && a.ops === b.ops;

/** Polls `probe()` every `everyMs` until it gives a value; throws after `timeoutMs` with `what` and the last value seen. */
async function until(what, probe, { everyMs = 100, timeoutMs = 600_000 } = {}) {
  const t0 = performance.now();
  let last = null;
  for (;;) {
    const value = await probe((seen) => (last = seen));
    if (value) return value;
    if (performance.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms (last seen ${JSON.stringify(last)})`);
    await sleep(everyMs);
  }
}

/** Mints a brain pairing token on `minting` and completes it on `completing`, which is to dial `syncUrl`. */
async function pair(parts, minting, completing, syncUrl) {
  const minted = (await api(minting, '/api/devices/pair', { method: 'POST', body: { kind: 'brain', name: 'bench-a' } })).body;
  const brainId = (await api(minting, '/api/sync/status')).body.brain_id;
  const url = parts.encodePairUrl({ v: 1, kind: 'brain', brain_id: brainId, token: minted.token, expires_at: Math.floor(minted.expires_at), pin_required: false, urls: [minting.url], mdns: null });
  return (await api(completing, '/api/sync/pair', { method: 'POST', body: { url, sync_url: syncUrl } })).body;
}

async function loadPairing(root, dir) {
  const outfile = join(dir, 'pair-payload.mjs');
  await build({ entryPoints: [join(root, 'mesh/pair-payload.ts')], outfile, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'warning' });
  return import(pathToFileURL(outfile).href);
}

/** What one direction of the link carried between two snapshots of proxy.frames(): frames and bytes by type, batches resent. */
function directionDelta(after, before) {
  const byType = {};
  for (const [type, t] of Object.entries(after.byType)) {
    const b = before.byType[type] ?? { frames: 0, bytes: 0 };
    if (t.frames > b.frames) byType[type] = { frames: t.frames - b.frames, bytes: t.bytes - b.bytes };
  }
  return { by_type: byType, resent_batches: after.resent.batches - before.resent.batches, resent_bytes: after.resent.bytes - before.resent.bytes, unreadable: after.unreadable - before.unreadable };
}

/** The frames of the link each way since `before` (A → B is `down`: B dials A through the proxy). */
const framesSince = (proxy, before) => {
  const now = proxy.frames();
  return { a_to_b: directionDelta(now.down, before.down), b_to_a: directionDelta(now.up, before.up) };
};

/** Bytes per op on the wire, and without the batches sent again (what the link would carry if none were). */
const bytesPerOp = (bytes, frames, ops) => ({ all: round(bytes.total / ops, 1), without_resent: round((bytes.total - frames.a_to_b.resent_bytes - frames.b_to_a.resent_bytes) / ops, 1) });

const delta = (after, before) => ({ up: after.up - before.up, down: after.down - before.down, total: after.total - before.total, connections: after.connections - before.connections });

// ── Phases ───────────────────────────────────────────────────────────────────────────────────────

/** A's first start makes its home and brain.db; the rows go in while it is stopped; the second start backfills their ops. */
async function seededBrainA(root, runtime, parts, home, sizes, log) {
  const first = await startBrain(root, { home, port: await freePort(), runtime, token: TOKEN });
  await first.stop();
  log(`writing ${sizes.notes} notes, ${sizes.episodes} episodes, ${sizes.triples} triples into A's store`);
  const insert = await seedMemory(parts, join(home, 'brain.db'), sizes);
  const t0 = performance.now();
  const filling = await startBrain(root, { home, port: await freePort(), runtime, token: TOKEN, timeoutMs: 300_000 });
  const expected = sizes.notes + sizes.episodes + sizes.triples;
  await until('A backfills an op per record', async (seen) => seen((await api(filling, '/api/sync/status')).body.ops.local) >= expected, { everyMs: 50 });
  const backfillMs = performance.now() - t0;
  const backfillCpu = cpuOf(filling.child.pid).ms;
  await filling.stop();
  // The same home started again, every record with its op already: the start without the backfill.
  const brain = await startBrain(root, { home, port: await freePort(), runtime, token: TOKEN, timeoutMs: 300_000 });
  log(`A backfilled ${expected} ops: spawn to /health ${Math.round(filling.startMs)} ms, to every op ${Math.round(backfillMs)} ms; restarted without backfill in ${Math.round(brain.startMs)} ms`);
  return {
    brain,
    insert,
    start: {
      ops: expected,
      spawn_to_health_ms: round(filling.startMs, 0),
      spawn_to_all_ops_ms: round(backfillMs, 0),
      cpu_ms: Math.round(backfillCpu),
      restart_spawn_to_health_ms: round(brain.startMs, 0),
      restart_cpu_ms: Math.round(brain.startCpu.ms),
      backfill_ms: round(backfillMs - brain.startMs, 0),
      backfill_ops_per_s: Math.round((expected * 1000) / Math.max(1, backfillMs - brain.startMs)),
    },
  };
}

async function opMilestones(brain, marks, t0) {
  const reached = [];
  await until('B applies every op', async (seen) => {
    const ops = seen((await api(brain, '/api/sync/status')).body.ops.total);
    while (reached.length < marks.length && ops >= marks[reached.length]) reached.push(performance.now() - t0);
    return reached.length === marks.length;
  }, { timeoutMs: 1_500_000 });
  return reached;
}

async function initialSync(parts, a, b, proxy, sizes, log) {
  const target = await holdings(a.brain);
  const pids = { a: a.brain.child.pid, b: b.child.pid };
  const rss = sampleRss(pids);
  const cpu = cpuWindow(pids);
  const io = ioWindow(pids);
  const bytes0 = proxy.bytes();
  const frames0 = proxy.frames();
  log(`B pairs with A and pulls ${target.ops} ops`);
  const t0 = performance.now();
  await pair(parts, a.brain, b, `ws://127.0.0.1:${proxy.port}/sync`);
  const pairMs = performance.now() - t0;
  // A's log holds the backfilled notes first, then episodes, then triples, and sends them in that order.
  const marks = [sizes.notes, sizes.notes + sizes.episodes, target.ops];
  const [notesMs, episodesMs, opsMs] = await opMilestones(b, marks, t0);
  await until('B holds all of A', async (seen) => same(seen(await holdings(b)), target), { everyMs: 20 });
  const ms = performance.now() - t0;
  const bytes = delta(proxy.bytes(), bytes0);
  const frames = framesSince(proxy, frames0);
  const cpuUse = cpu.stop();
  log(`initial sync: ${Math.round(ms)} ms, ${bytes.total} bytes`);
  return {
    ops: target.ops,
    holds: target,
    pair_ms: round(pairMs, 0),
    pair_to_all_held_ms: round(ms, 0),
    ops_per_s: Math.round((target.ops * 1000) / ms),
    by_tier: {
      notes: { ops: sizes.notes, ms: round(notesMs, 0), ops_per_s: Math.round((sizes.notes * 1000) / notesMs) },
      episodes: { ops: sizes.episodes, ms: round(episodesMs - notesMs, 0), ops_per_s: Math.round((sizes.episodes * 1000) / (episodesMs - notesMs)) },
      triples: { ops: target.ops - marks[1], ms: round(opsMs - episodesMs, 0), ops_per_s: Math.round(((target.ops - marks[1]) * 1000) / (opsMs - episodesMs)) },
    },
    bytes,
    bytes_per_op: bytesPerOp(bytes, frames, target.ops),
    frames,
    mib_per_s: round(bytes.total / 2 ** 20 / (ms / 1000), 2),
    cpu: cpuUse,
    cpu_ms_per_op: { a: round(cpuUse.a.cpu_ms / target.ops, 3), b: round(cpuUse.b.cpu_ms / target.ops, 3) },
    io_per_op: perOp(io.stop(), target.ops),
    memory: rss.stop(),
  };
}

/** Polls the op totals of `brains` (GET /api/sync/status, cheap: no count of the tier tables) every 20 ms until each holds `ops`. */
function opsReach(brains, ops, timeoutMs = 600_000) {
  return until(`every brain holds ${ops} ops`, async (seen) => {
    const totals = seen(await Promise.all(brains.map(async (brain) => (await api(brain, '/api/sync/status')).body.ops.total)));
    return totals.every((t) => t >= ops);
  }, { everyMs: 20, timeoutMs });
}

/**
 * Waits until `b` holds what `a` holds: the same ops, and as many notes, episodes and triples. For a
 * one-way flow only: `a` must have nothing left to write of its own (a brain counts a peer's ops before
 * its memory shows them).
 */
async function caughtUp(a, b, timeoutMs) {
  const target = await holdings(a);
  await opsReach([b], target.ops, timeoutMs);
  await until('B holds what A holds', async (seen) => same(seen(await holdings(b)), target), { timeoutMs });
}

/** Polls GET /api/memory/notes/:id on `brain` every WATCH_POLL_MS until it answers 200; resolves with the time it did. */
async function arrival(brain, id) {
  for (;;) {
    const res = await fetch(`${brain.url}/api/memory/notes/${id}`, { headers });
    await res.arrayBuffer();
    if (res.status === 200) return performance.now();
    if (res.status !== 404) throw new Error(`GET note ${id} on B: ${res.status}`);
    await sleep(WATCH_POLL_MS);
  }
}

async function steadyState(a, b, proxy, seconds, log) {
  const writes = STEADY_HZ * seconds;
  const pids = { a: a.child.pid, b: b.child.pid };
  log(`steady state: ${STEADY_HZ} notes/s on A for ${seconds} s, every ${WATCH_EVERY}th watched on B`);
  const bytes0 = proxy.bytes();
  const frames0 = proxy.frames();
  const cpu = cpuWindow(pids);
  const io = ioWindow(pids);
  const fromAck = [];
  const fromRequest = [];
  const pending = [];
  const t0 = performance.now();
  let late = 0;
  for (let i = 0; i < writes; i++) {
    const due = t0 + (i * 1000) / STEADY_HZ;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    else late++;
    pending.push(
      (async () => {
        const sent = performance.now();
        const note = (await api(a, '/api/memory/note', { method: 'POST', body: { text: noteText('steady', i) } })).body;
        const acked = performance.now();
        if (i % WATCH_EVERY !== 0) return;
        const seen = await arrival(b, note.id);
        fromAck.push(seen - acked);
        fromRequest.push(seen - sent);
      })(),
    );
  }
  await Promise.all(pending);
  const writeWall = performance.now() - t0;
  const cpuUse = cpu.stop();
  const ioUse = io.stop();
  await caughtUp(a, b, 60_000);
  const bytes = delta(proxy.bytes(), bytes0);
  return {
    writes,
    rate_hz: STEADY_HZ,
    write_wall_ms: round(writeWall, 0),
    writes_started_late: late,
    watched: fromAck.length,
    propagation_from_201: latency(fromAck),
    propagation_from_request: latency(fromRequest),
    bytes,
    bytes_per_change: round(bytes.total / writes, 1),
    frames: framesSince(proxy, frames0),
    cpu: cpuUse,
    io_per_change: perOp(ioUse, writes),
  };
}

/** Writes `n` notes on `brain`, WRITERS at a time; resolves with the milliseconds it took. */
async function writeNotes(brain, tag, n) {
  const t0 = performance.now();
  let next = 0;
  const writer = async () => {
    while (next < n) {
      const i = next++;
      await api(brain, '/api/memory/note', { method: 'POST', body: { text: noteText(tag, i) } });
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  return performance.now() - t0;
}

async function partition(a, b, proxy, n, log) {
  log(`partition: proxy cut, ${n} notes written on each side`);
  await proxy.cut();
  const before = await holdings(a);
  const [aMs, bMs] = await Promise.all([writeNotes(a, 'partition-a', n), writeNotes(b, 'partition-b', n)]);
  const target = before.notes + 2 * n;
  const bytes0 = proxy.bytes();
  const frames0 = proxy.frames();
  const pids = { a: a.child.pid, b: b.child.pid };
  const cpu = cpuWindow(pids);
  const io = ioWindow(pids);
  await proxy.heal();
  const t0 = performance.now();
  const now = api(b, '/api/sync/now', { method: 'POST', body: { timeout_ms: 120_000 } }).then((r) => ({ ms: performance.now() - t0, result: r.body.peers }));
  await opsReach([a, b], before.ops + 2 * n);
  const opsMs = performance.now() - t0;
  // Each op log holds every op before the memory shows every note (the tier tables are written after
  // the op log's commit, record by record): converged is when both show all of them.
  await until('both brains show every note', async (seen) => {
    const held = seen(await Promise.all([holdings(a), holdings(b)]));
    return held.every((h) => h.notes === target && h.ops === before.ops + 2 * n);
  }, { everyMs: 50 });
  const ms = performance.now() - t0;
  const syncNow = await now;
  const bytes = delta(proxy.bytes(), bytes0);
  const frames = framesSince(proxy, frames0);
  log(`converged in ${Math.round(ms)} ms, ${bytes.total} bytes`);
  return {
    notes_per_side: n,
    write_ms: { a: round(aMs, 0), b: round(bMs, 0) },
    writes_per_s: { a: Math.round((n * 1000) / aMs), b: Math.round((n * 1000) / bMs) },
    heal_to_all_ops_ms: round(opsMs, 0),
    heal_to_converged_ms: round(ms, 0),
    sync_now: { ms: round(syncNow.ms, 0), peers: syncNow.result },
    ops_exchanged: 2 * n,
    ops_per_s: Math.round((2 * n * 1000) / ms),
    bytes,
    bytes_per_op: bytesPerOp(bytes, frames, 2 * n),
    frames,
    cpu: cpu.stop(),
    io_per_op: perOp(io.stop(), 2 * n),
  };
}

/** The initial sync's bytes over a bare ws socket through a proxy like B's, in sync-sized frames. */
async function wsBaseline(root, runtime, bytes, log) {
  const server = await startScript(join(root, 'bench/fixtures/ws-ack.mjs'), { port: await freePort(), runtime });
  const proxy = await startTcpProxy({ target: Number(new URL(server.url).port) });
  try {
    const frames = Math.max(8, Math.ceil(bytes / BATCH_BYTES));
    log(`baseline: ${frames} frames of 256 KiB over bare ws through the proxy`);
    const cpu = cpuWindow({ server: server.child.pid });
    const sent = await streamFrames(`ws://127.0.0.1:${proxy.port}/`, { frames, frameBytes: BATCH_BYTES, window: 4 });
    return { frames, frame_bytes: BATCH_BYTES, window: 4, ms: round(sent.ms, 0), mib_per_s: round(sent.bytes / 2 ** 20 / (sent.ms / 1000), 1), wire_bytes: proxy.bytes(), cpu: cpu.stop() };
  } finally {
    await proxy.close();
    await server.stop();
  }
}

function sizesFor(scale) {
  const n = (full) => Math.max(1, Math.round(full * scale));
  return { notes: n(FULL.notes), episodes: n(FULL.episodes), triples: n(FULL.triples), partitionNotes: n(FULL.partitionNotes), steadySeconds: Math.max(5, Math.min(FULL.steadySeconds, Math.round(FULL.steadySeconds * scale * 4))) };
}

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[sync] ${m}\n`));
  const scale = ctx.scale ?? Number(process.env.SVC_BENCH_SYNC_SCALE ?? 1);
  const sizes = sizesFor(scale);
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'sync-'));
  const runtime = await brainRuntime(root);
  const parts = { ...(await loadMemoryParts(root, dir)), ...(await loadPairing(root, dir)) };
  let a = null;
  let b = null;
  let proxy = null;
  try {
    a = await seededBrainA(root, runtime, parts, join(dir, 'a'), sizes, log);
    b = await startBrain(root, { home: join(dir, 'b'), port: await freePort(), runtime, token: TOKEN });
    proxy = await startTcpProxy({ target: Number(new URL(a.brain.url).port), frames: true });
    const initial = await initialSync(parts, a, b, proxy, sizes, log);
    const peersOfA = (await api(a.brain, '/api/sync/peers')).body.peers.map((p) => ({ url: p.url, direction: p.direction, state: p.state }));
    const steady = await steadyState(a.brain, b, proxy, sizes.steadySeconds, log);
    const healed = await partition(a.brain, b, proxy, sizes.partitionNotes, log);
    const baseline = await wsBaseline(root, runtime, initial.bytes.total, log);
    return {
      setup: {
        scale,
        seeded: { notes: sizes.notes, episodes: sizes.episodes, triples: sizes.triples, how: 'written into the stopped brain A store in one transaction per tier (bench/lib/memory-seed.mjs); ops by the backfill at the next start' },
        link: 'B dials A /sync through a counting TCP proxy in the bench process (loopback); A has no URL to dial B',
        peers_of_a: peersOfA,
        steady_writes: 'POST /api/memory/note on A, timer-paced, from the bench process',
        partition_writes: `POST /api/memory/note, ${WRITERS} at a time on each side`,
      },
      seed_insert: a.insert,
      a_start_with_backfill: a.start,
      initial_sync: initial,
      steady_state: steady,
      partition: healed,
      baseline: { native_insert_rows_per_s: a.insert.rows_per_s, ws_same_bytes: baseline },
      initial_sync_over_ws_baseline: round(initial.pair_to_all_held_ms / baseline.ms, 1),
      targets: {
        initial_sync_ops_per_s: { target: 'informational', value: initial.ops_per_s, pass: null },
        steady_propagation_p99_ms: { target: 'informational', value: steady.propagation_from_201.p99_ms, pass: null },
        partition_convergence_ms: { target: 'informational', value: healed.heal_to_converged_ms, pass: null },
      },
    };
  } finally {
    await proxy?.close();
    await b?.stop();
    await a?.brain.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
