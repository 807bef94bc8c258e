// The pairing round trip (docs/pairing.md), as a phone on another network sees it: mint a QR code
// (GET /api/devices/pair/qr with the API token: a token minted, the PNG rendered), decode the PNG
// with zbarimg, complete pairing from the URL it carries (POST /api/devices/pair/complete), then the
// first authenticated request with the new device key (GET /api/approvals). The built brain runs in a
// network namespace this section creates (a veth pair on 10.235.N.0/30; nothing reaches the machine's
// network), listening beyond loopback (--host 0.0.0.0, so the access mode is lan). Baseline in the
// same run, interleaved: GET /health over the same link. Needs root (ip netns) and zbarimg; without
// them the section reports why it did not run.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), runs }
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brainRuntime, latency, pollHealth, round } from '../lib/brain.mjs';

const PORT = 9090; // inside the brain's own namespace: always free

const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

function createNamespace() {
  const n = (process.pid % 200) + 20;
  const net = { ns: `svc-bench-pair-${process.pid}`, hostIf: `sbq${process.pid}h`, nsIf: `sbq${process.pid}n`, hostV4: `10.235.${n}.1`, brainV4: `10.235.${n}.2` };
  net.destroy = () => {
    try {
      ip('netns', 'del', net.ns);
    } catch {
      // not there
    }
  };
  net.destroy();
  ip('netns', 'add', net.ns);
  ip('link', 'add', net.hostIf, 'type', 'veth', 'peer', 'name', net.nsIf);
  ip('link', 'set', net.nsIf, 'netns', net.ns);
  ip('addr', 'add', `${net.hostV4}/30`, 'dev', net.hostIf);
  ip('link', 'set', net.hostIf, 'up');
  ip('-n', net.ns, 'addr', 'add', `${net.brainV4}/30`, 'dev', net.nsIf);
  ip('-n', net.ns, 'link', 'set', net.nsIf, 'up');
  ip('-n', net.ns, 'link', 'set', 'lo', 'up');
  return net;
}

const hasZbarimg = () => {
  try {
    execFileSync('zbarimg', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** The decoded text of a QR PNG (zbarimg, as the e2e test reads it). */
const decode = (file) => execFileSync('zbarimg', ['--raw', '-q', file], { encoding: 'utf8' }).trim();


async function ok(res, expect, what) {
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== expect) throw new Error(`${what}: ${res.status} ${body.toString('utf8').slice(0, 200)}`);
  return body;
}

const healthy = (url, child) => pollHealth(url, { everyMs: 20, down: () => (child.exitCode !== null ? `brain exited with ${child.exitCode}` : null) });

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[pairing] ${m}\n`));
  const runs = ctx.runs ?? 60;
  if (process.getuid?.() !== 0) return { skipped: 'needs root to create a network namespace (ip netns add)' };
  if (!hasZbarimg()) return { skipped: 'zbarimg is not installed (Debian zbar-tools)' };
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'pairing-'));
  const home = join(dir, 'home');
  mkdirSync(home);
  const runtime = await brainRuntime(root);
  const net = createNamespace();
  const brain = spawn('ip', ['netns', 'exec', net.ns, process.execPath, ...runtime.flags, join(root, 'dist/svc.mjs'), 'serve', '--host', '0.0.0.0', '--port', String(PORT)], {
    env: { ...process.env, ...runtime.env, SVC_HOME: home, SVC_LOG_LEVEL: 'warn', SVC_API_TOKEN: '' },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const exited = new Promise((resolve) => brain.once('exit', resolve));
  const url = `http://${net.brainV4}:${PORT}`;
  try {
    await healthy(url, brain);
    const admin = { authorization: `Bearer ${readFileSync(join(home, 'api-token'), 'utf8').trim()}` };
    const png = join(dir, 'qr.png');
    const parts = { qr: [], decode: [], complete: [], first_request: [] };
    const total = [];
    const health = [];
    /** One pairing as a phone does it; returns the parts' milliseconds. */
    const once = async () => {
      const t0 = performance.now();
      writeFileSync(png, await ok(await fetch(`${url}/api/devices/pair/qr?kind=phone`, { headers: admin }), 200, 'qr'));
      const t1 = performance.now();
      const text = decode(png);
      const t2 = performance.now();
      const q = new URLSearchParams(text.slice('svc://pair?'.length));
      const at = q.getAll('url').find((u) => u.startsWith(`http://${net.brainV4}:`));
      if (!at) throw new Error(`the pair URL does not list ${net.brainV4}: ${text}`);
      const done = JSON.parse((await ok(await fetch(`${at}/api/devices/pair/complete`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: q.get('token') }) }), 201, 'complete')).toString('utf8'));
      const t3 = performance.now();
      await ok(await fetch(`${at}/api/approvals`, { headers: { authorization: `Bearer ${done.device_key}` } }), 200, 'first request');
      const t4 = performance.now();
      return { qr: t1 - t0, decode: t2 - t1, complete: t3 - t2, first_request: t4 - t3, total: t4 - t0 };
    };
    log(`warm-up, then ${runs} pairings, each after a GET /health`);
    for (let i = 0; i < 5; i++) await once();
    for (let i = 0; i < runs; i++) {
      const h0 = performance.now();
      await ok(await fetch(`${url}/health`), 200, 'health');
      health.push(performance.now() - h0);
      const r = await once();
      for (const k of Object.keys(parts)) parts[k].push(r[k]);
      total.push(r.total);
    }
    const round_trip = latency(total);
    const baseline = latency(health);
    return {
      setup: { runs, link: 'veth between this process and the brain\'s namespace', client: 'sequential fetch (keep-alive) and one zbarimg process per decode, same machine, unpinned', qr: 'PNG, error correction M, scale 6' },
      health: baseline,
      round_trip,
      parts: Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, latency(v)])),
      round_trip_p50_over_health_p50: round(round_trip.p50_ms / baseline.p50_ms, 1),
      targets: { round_trip_p99: { target: 'informational', value: round_trip.p99_ms, pass: null } },
    };
  } finally {
    if (brain.exitCode === null && brain.signalCode === null) brain.kill('SIGTERM');
    await exited;
    net.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}
