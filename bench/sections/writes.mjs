// Durable acknowledged writes per second through the API: POST /api/memory/note from 32 concurrent
// clients (autocannon, each body unique), every 201 sent only after its group commit reached the disk
// (synchronous=FULL). Baseline in the same run: one client, so every write waits for its own commit.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), connections, durationS }
import autocannon from 'autocannon';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { brainRuntime, freePort, round, startBrain } from '../lib/brain.mjs';

const TOKEN = 'bench-token-writes-0123456789';

async function post(url, connections, duration) {
  let n = 0;
  const r = await autocannon({
    url: `${url}/api/memory/note`,
    method: 'POST',
    connections,
    duration,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ text: `bench note ${n++} ${Math.random().toString(36).slice(2)} about the garden, the heating and a reminder` }) }) }],
  });
  const acknowledged = r['2xx'];
  return {
    connections,
    acknowledged_per_s: round(acknowledged / duration, 0),
    acknowledged,
    latency_ms: { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max },
    non_2xx: r.non2xx,
    errors: r.errors,
  };
}

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[writes] ${m}\n`));
  const durationS = ctx.durationS ?? 5;
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'writes-'));
  const runtime = await brainRuntime(root);
  const brain = await startBrain(root, { home: join(dir, 'home'), port: await freePort(), runtime, token: TOKEN });
  try {
    const probe = await fetch(`${brain.url}/api/memory/note`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'probe' }) });
    await probe.arrayBuffer();
    if (probe.status === 404) return { skipped: 'POST /api/memory/note is not served by this build' };
    if (probe.status !== 201) throw new Error(`POST /api/memory/note answered ${probe.status}`);
    log(`1 client, ${durationS} s`);
    const single = await post(brain.url, 1, durationS);
    log(`${ctx.connections ?? 32} clients, ${durationS} s`);
    const concurrent = await post(brain.url, ctx.connections ?? 32, durationS);
    return {
      durability: 'each 201 is sent after the COMMIT of its group commit, journal_mode=DELETE, synchronous=FULL',
      single_client: single,
      concurrent,
      speedup_from_group_commit: round(concurrent.acknowledged_per_s / single.acknowledged_per_s, 1),
    };
  } finally {
    await brain.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
