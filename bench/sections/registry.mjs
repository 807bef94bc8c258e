// The marketplace registry (docs/registry.md). What enabling it costs the brain, and what its paths
// cost, each against a baseline measured in the same run:
// - cold start and idle RSS of a brain with `registry.enabled` against the same build with the default
//   settings (registry off), alternating A B A B so the machine's load hits both;
// - `svc publish --daemon` of a folder with a 256 KiB file (pack, sign, upload, checks, store) against
//   `svc marketplace` on the same brain (the CLI's own start and one GET);
// - GET of the published tarball against GET /health, both on keep-alive connections.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), runs, idleMs, requests }
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brainRuntime, freePort, latency, memoryOf, percentile, round, sleep, startBrain } from '../lib/brain.mjs';

const run$ = promisify(execFile);

async function coldStart(root, runtime, home, idleMs) {
  const brain = await startBrain(root, { home, port: await freePort(), runtime });
  try {
    await sleep(idleMs);
    return { ms: brain.startMs, rss: memoryOf(brain.child.pid).rss_mib };
  } finally {
    await brain.stop();
  }
}

async function timedCli(root, args, env) {
  const t0 = performance.now();
  await run$(process.execPath, [join(root, 'dist/svc.mjs'), ...args], { env: { ...process.env, SVC_API_TOKEN: '', ...env } });
  return performance.now() - t0;
}

async function timedGets(url, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(url);
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    out.push(performance.now() - t0);
  }
  return out;
}

const median = (values) => round(percentile(values, 50), 1);

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[registry] ${m}\n`));
  const runs = ctx.runs ?? 6;
  const idleMs = ctx.idleMs ?? 1500;
  const requests = ctx.requests ?? 100;
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'registry-'));
  const runtime = await brainRuntime(root);
  try {
    const off = [];
    const on = [];
    for (let i = 0; i < runs; i++) {
      log(`cold start ${i + 1}/${runs}: registry off, then on`);
      off.push(await coldStart(root, runtime, join(dir, `off-${i}`), idleMs));
      const home = join(dir, `on-${i}`);
      mkdirSync(home, { recursive: true, mode: 0o700 });
      writeFileSync(join(home, 'settings.json'), JSON.stringify({ registry: { enabled: true } }));
      on.push(await coldStart(root, runtime, home, idleMs));
    }

    log('publish, review and download on a brain with the registry on');
    const home = join(dir, 'paths');
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(join(home, 'settings.json'), JSON.stringify({ registry: { enabled: true } }));
    const brain = await startBrain(root, { home, port: await freePort(), runtime });
    try {
      const env = { SVC_HOME: home, SVC_URL: brain.url };
      const token = readFileSync(join(home, 'api-token'), 'utf8').trim();
      const publishMs = [];
      const listMs = [];
      for (let i = 0; i < 5; i++) {
        const bundle = join(dir, `daemon-${i}`);
        mkdirSync(join(bundle, 'bin'), { recursive: true });
        writeFileSync(join(bundle, 'manifest.json'), JSON.stringify({ node_id: `bench-${i}`, version: '1.0.0', entry: 'bin/run.js' }));
        writeFileSync(join(bundle, 'bin', 'run.js'), 'console.log(1)\n');
        writeFileSync(join(bundle, 'bin', 'data.bin'), randomBytes(256 * 1024));
        listMs.push(await timedCli(root, ['marketplace', '--json'], env));
        publishMs.push(await timedCli(root, ['publish', '--daemon', bundle, '--json'], env));
      }
      const approve = await fetch(`${brain.url}/registry/v1/review/bench-0`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"decision":"approve"}' });
      if (!approve.ok) throw new Error(`approve: HTTP ${approve.status}`);
      const health = await timedGets(`${brain.url}/health`, requests);
      const download = await timedGets(`${brain.url}/registry/v1/items/bench-0/download`, requests);
      const offRss = off.map((r) => r.rss);
      const onRss = on.map((r) => r.rss);
      return {
        cold_start_ms: { registry_off: median(off.map((r) => r.ms)), registry_on: median(on.map((r) => r.ms)), ratio: round(percentile(on.map((r) => r.ms), 50) / percentile(off.map((r) => r.ms), 50), 3) },
        idle_rss_mib: { registry_off: median(offRss), registry_on: median(onRss), delta: round(percentile(onRss, 50) - percentile(offRss, 50), 1) },
        publish_256k_daemon_ms: { publish: median(publishMs), baseline_svc_marketplace: median(listMs), extra: round(percentile(publishMs, 50) - percentile(listMs, 50), 1) },
        download_256k: { download: latency(download), baseline_health: latency(health) },
      };
    } finally {
      await brain.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
