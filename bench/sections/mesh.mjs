// Time from the brain's start to its discovery over mDNS (docs/mesh.md), with real multicast between
// two network namespaces this section creates (a veth pair on 10.233.N.0/30; nothing reaches the
// machine's network). In the peer namespace a prober — mesh/mdns.ts, bundled here, the code a
// node-agent uses — browses `_svc._tcp` and polls GET /health at the brain's address; the built brain
// is then spawned in the other namespace with --host 0.0.0.0 on a fresh home. Both instants come from
// the prober, against the spawn instant taken here (Date.now(), one clock for both processes).
// Baseline in the same run: the same brain's cold start to its first /health 200, seen from the peer.
// Needs root (ip netns); without it the section reports why it did not run.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), runs }
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { brainRuntime, bundleFixture, round, summary } from '../lib/brain.mjs';

const PORT = 9090; // inside the brain's own namespace: always free

const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

function createNamespaces() {
  const n = (process.pid % 200) + 20;
  const net = { brainNs: `svc-bench-b-${process.pid}`, peerNs: `svc-bench-p-${process.pid}`, brainIf: `sbb${process.pid}`, peerIf: `sbp${process.pid}`, brainV4: `10.233.${n}.1`, peerV4: `10.233.${n}.2` };
  net.destroy = () => {
    for (const ns of [net.brainNs, net.peerNs]) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // not there
      }
    }
  };
  net.destroy();
  ip('netns', 'add', net.brainNs);
  ip('netns', 'add', net.peerNs);
  ip('link', 'add', net.brainIf, 'netns', net.brainNs, 'type', 'veth', 'peer', 'name', net.peerIf, 'netns', net.peerNs);
  ip('-n', net.brainNs, 'addr', 'add', `${net.brainV4}/30`, 'dev', net.brainIf);
  ip('-n', net.peerNs, 'addr', 'add', `${net.peerV4}/30`, 'dev', net.peerIf);
  for (const [ns, dev] of [
    [net.brainNs, net.brainIf],
    [net.peerNs, net.peerIf],
  ]) {
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('-n', ns, 'link', 'set', dev, 'up');
    ip('-n', ns, 'route', 'add', '224.0.0.0/4', 'dev', dev);
  }
  return net;
}

/** The prober's source: browse _svc._tcp, poll /health, print both instants once both are known. */
const PROBER = (root) => `
import { browseMdns } from ${JSON.stringify(join(root, 'mesh/mdns.ts'))};
const [url, port] = process.argv.slice(2);
const log = { warn: (o, m) => process.stderr.write(m + '\\n'), debug: () => undefined };
const seen = {};
const done = () => {
  if (seen.health === undefined || seen.discovered === undefined) return;
  process.stdout.write(JSON.stringify(seen) + '\\n');
  void browse.stop().then(() => process.exit(0));
};
const browse = await browseMdns({ log, kinds: ['api'], onUp: (s) => {
  if (s.port !== Number(port) || seen.discovered !== undefined) return;
  seen.discovered = Date.now();
  done();
} });
process.stdout.write('ready\\n');
for (;;) {
  try {
    const r = await fetch(url + '/health');
    await r.arrayBuffer();
    if (r.status === 200) { seen.health = Date.now(); done(); break; }
  } catch (err) {
    if (!(err instanceof TypeError)) throw err; // not listening yet
  }
  await new Promise((r) => setTimeout(r, 2));
}
`;

function lines(child) {
  const queue = [];
  const waiting = [];
  createInterface({ input: child.stdout }).on('line', (l) => (waiting.length > 0 ? waiting.shift()(l) : queue.push(l)));
  return () => new Promise((resolve) => (queue.length > 0 ? resolve(queue.shift()) : waiting.push(resolve)));
}

function exitOf(child) {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
}

async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** One run: prober ready in the peer namespace, then the brain spawned; returns ms from spawn to /health and to discovery. */
async function once(root, net, runtime, prober, dir) {
  const probe = spawn('ip', ['netns', 'exec', net.peerNs, process.execPath, prober, `http://${net.brainV4}:${PORT}`, String(PORT)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const next = lines(probe);
  if ((await withTimeout(next(), 10_000, 'prober start')) !== 'ready') throw new Error('prober did not start');
  const home = mkdtempSync(join(dir, 'home-'));
  const t0 = Date.now();
  const brain = spawn('ip', ['netns', 'exec', net.brainNs, process.execPath, ...runtime.flags, join(root, 'dist/svc.mjs'), 'serve', '--host', '0.0.0.0', '--port', String(PORT)], {
    env: { ...process.env, ...runtime.env, SVC_HOME: home, SVC_LOG_LEVEL: 'warn', SVC_API_TOKEN: '' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const seen = JSON.parse(await withTimeout(next(), 30_000, 'discovery'));
    return { health: seen.health - t0, discovered: seen.discovered - t0 };
  } finally {
    probe.kill('SIGTERM');
    brain.kill('SIGTERM');
    await Promise.all([exitOf(probe), exitOf(brain)]);
    rmSync(home, { recursive: true, force: true });
  }
}

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? (() => undefined);
  if (process.getuid?.() !== 0) return { skipped: 'needs root to create network namespaces (ip netns add); run the bench as root to measure discovery' };
  const dir = mkdtempSync(join(ctx.tmpDir ?? join(root, '.bench-tmp'), 'mesh-'));
  const entry = join(dir, 'prober-entry.mjs');
  writeFileSync(entry, PROBER(root));
  const prober = await bundleFixture(entry, join(dir, 'prober.mjs'));
  const runtime = await brainRuntime(root);
  const net = createNamespaces();
  const runs = ctx.runs ?? 5;
  const health = [];
  const discovered = [];
  const gap = [];
  try {
    for (let i = 0; i < runs; i++) {
      const r = await once(root, net, runtime, prober, dir);
      log(`mesh: run ${i + 1}/${runs}: /health after ${r.health} ms, discovered after ${r.discovered} ms`);
      health.push(r.health);
      discovered.push(r.discovered);
      gap.push(r.discovered - r.health);
    }
  } finally {
    net.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    what: 'ms from spawning the brain (--host 0.0.0.0, fresh home) in one namespace to its discovery (_svc._tcp resolved) by mesh/mdns in another; baseline: to its first GET /health 200 from that namespace',
    brain_start_to_discovery_ms: summary(discovered, 0),
    baseline_brain_start_to_health_ms: summary(health, 0),
    discovery_after_health_ms: summary(gap, 0),
    targets: { discovery_over_health: { target: 'informational', value: round(summary(discovered).median / summary(health).median, 2), pass: null } },
  };
}
