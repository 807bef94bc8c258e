// Agent core benchmark (issue 4).
//  1. turn overhead: one session, turns against a zero-latency provider, time inside the provider
//     subtracted — real SQLite memory (with notes to search), identity files, router, tool runner,
//     frames serialised as for a socket; a text-only turn and a turn with one tool call. Baseline: the
//     same provider consumed bare. Target: overhead p50 <= 3 ms.
//  2. 200 concurrent WebSocket sessions on the built brain (embedded local agent, zero latency), each
//     running turns back to back: turns/s, per-turn latency p50/p99, errors, brain RSS before/after.
//     Baseline: one session alone on the same brain. Target: no error at 200 sessions.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), turns, notes, sessions, turnsPerSession }
import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WebSocket } from 'ws';
import { brainRuntime, freePort, memoryOf, percentile, round, startBrain } from '../lib/brain.mjs';

async function harness(root, outDir) {
  const outfile = join(outDir, 'agent-harness.mjs');
  await build({ entryPoints: [join(root, 'test/daemon/agent/bench-harness.ts')], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning', loader: { '.json': 'json' } });
  return import(pathToFileURL(outfile).href);
}

/** One WebSocket session that runs `turns` turns back to back; resolves with per-turn latencies. */
function sessionClient(url, token, turns, texts) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, ['svc.v1', `svc.bearer.${token}`]);
    const latencies = [];
    let errors = 0;
    let sid = '';
    let t0 = 0;
    let i = 0;
    const next = () => {
      if (i >= turns) return ws.close(1000);
      t0 = performance.now();
      ws.send(JSON.stringify({ type: 'text_command', session_id: sid, payload: { text: texts[i++ % texts.length] } }));
    };
    ws.on('open', () => ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} })));
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.type === 'session_opened') (sid = m.session_id), next();
      else if (m.type === 'text_response') latencies.push(performance.now() - t0), next();
      else if (m.type === 'error') errors++, next();
    });
    ws.on('error', () => errors++);
    ws.on('close', (code) => resolve({ latencies, errors: errors + (latencies.length < turns ? turns - latencies.length : 0), code }));
  });
}

async function concurrent(root, tmp, { sessions, turnsPerSession, log }) {
  const runtime = await brainRuntime(root);
  const port = await freePort();
  const token = 'bench-token-0123456789abcdef';
  const home = mkdtempSync(join(tmp, 'agent-ws-'));
  const brain = await startBrain(root, { home, port, runtime, token });
  const url = `ws://127.0.0.1:${port}/v1/session`;
  const texts = ['status', 'list devices', 'who are you', 'help', 'what do you know about the garden'];
  try {
    const idle = memoryOf(brain.child.pid);
    log('one session alone (baseline)');
    const alone = await sessionClient(url, token, turnsPerSession * 2, texts);
    log(`${sessions} concurrent sessions x ${turnsPerSession} turns`);
    const t0 = performance.now();
    const results = await Promise.all(Array.from({ length: sessions }, () => sessionClient(url, token, turnsPerSession, texts)));
    const wallS = (performance.now() - t0) / 1000;
    const after = memoryOf(brain.child.pid);
    const all = results.flatMap((r) => r.latencies);
    const errors = results.reduce((n, r) => n + r.errors, 0);
    return {
      sessions,
      turns_per_session: turnsPerSession,
      baseline_one_session: { turns: alone.latencies.length, p50_ms: round(percentile(alone.latencies, 50), 2), p99_ms: round(percentile(alone.latencies, 99), 2), errors: alone.errors },
      turns: all.length,
      errors,
      turns_per_s: round(all.length / wallS, 0),
      latency_p50_ms: round(percentile(all, 50), 2),
      latency_p99_ms: round(percentile(all, 99), 2),
      rss_idle_mib: idle.rss_mib,
      rss_after_mib: after.rss_mib,
      exit_code: await brain.stop(),
    };
  } finally {
    await brain.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[agent] ${m}\n`));
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'agent-'));
  try {
    const h = await harness(root, dir);
    log('turn overhead with a zero-latency provider');
    const overhead = await h.measure({ turns: ctx.turns ?? 2000, notes: ctx.notes ?? 1000 });
    const ws = await concurrent(root, dir, { sessions: ctx.sessions ?? 200, turnsPerSession: ctx.turnsPerSession ?? 20, log });
    return {
      overhead,
      websocket: ws,
      targets: {
        overhead_p50_ms: { target: '<= 3', value: overhead.text_turn.p50_ms, pass: overhead.text_turn.p50_ms <= 3 },
        overhead_tool_turn_p50_ms: { target: '<= 3', value: overhead.tool_turn.p50_ms, pass: overhead.tool_turn.p50_ms <= 3 },
        errors_at_200_sessions: { target: '0', value: ws.errors, pass: ws.errors === 0 && ws.sessions >= 200 },
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const small = process.argv.includes('--small');
  console.log(JSON.stringify(await run(small ? { turns: 300, notes: 200, sessions: 20, turnsPerSession: 5 } : {}), null, 2));
}
