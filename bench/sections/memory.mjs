// Memory benchmark (issue 3). Same-run baselines: API search latency against the same queries run
// directly on the store (the ceiling). Dataset: 100k notes + 20k episodes + 50k triples, bulk-loaded
// into a fresh $SVC_HOME, then the built brain (dist/svc.mjs) is started on it.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), counts: {notes, episodes, triples}, queries, rounds }
import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { brainRuntime } from '../lib/brain.mjs';

const TOKEN = 'bench-token-memory-0123456789';

async function harness(root, outDir) {
  const outfile = join(outDir, 'memory-harness.mjs');
  await build({ entryPoints: [join(root, 'test/daemon/memory/bench-harness.ts')], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning' });
  return import(pathToFileURL(outfile).href);
}

function startBrain(root, home, runtime) {
  // The flags and environment `svc start` and the systemd unit use (cli/brain-runtime.ts), so RSS and
  // latency are those of the brain as deployed.
  const child = spawn(process.execPath, [...runtime.flags, join(root, 'dist/svc.mjs'), 'serve', '--port', '0'], {
    env: { ...process.env, ...runtime.env, SVC_HOME: home, SVC_API_TOKEN: TOKEN, SVC_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`brain did not start: ${err}`)), 60_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /listening on http:\/\/[^"]*:(\d+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: `http://127.0.0.1:${m[1]}` });
      }
    });
    child.on('exit', (code) => reject(new Error(`brain exited ${code}: ${err}`)));
  });
}

const rssMiB = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : null;
};

async function apiSearch(url, queries, rounds, h) {
  const times = [];
  let degraded = 0;
  let hybrid = 0;
  for (let r = 0; r < rounds; r++) {
    for (const q of queries) {
      const t = performance.now();
      const res = await fetch(`${url}/api/memory/search?q=${encodeURIComponent(q)}&limit=10`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const body = await res.json();
      times.push(performance.now() - t);
      if (res.status !== 200) throw new Error(`search ${q}: ${res.status} ${JSON.stringify(body)}`);
      if (body.degraded) degraded++;
      if (body.mode === 'hybrid') hybrid++;
    }
  }
  return { ...h.latency(times), degraded, hybrid };
}

async function noteWrites(url, concurrency, ms) {
  const end = Date.now() + ms;
  let ok = 0;
  const worker = async (w) => {
    for (let i = 0; Date.now() < end; i++) {
      const res = await fetch(`${url}/api/memory/note`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ text: `bench note ${w}-${i} about nothing in particular` }) });
      await res.arrayBuffer();
      if (res.status === 201) ok++;
    }
  };
  const t = performance.now();
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  return { concurrency, notes: ok, per_second: Math.round(ok / ((performance.now() - t) / 1000)) };
}

/**
 * The same searches with an embedding server configured: every item gets a 384-dimension vector
 * (h.pseudoEmbedding, written as the indexer would), the brain loads their sign codes at start, and
 * each query is embedded over /v1/embeddings on loopback. Then recall@50 of the index against brute
 * force, in process. Reported, not a target: issue 3's p99 target is for search as shipped (no
 * embedding server), and with a real model the query embedding itself takes longer than 15 ms on a Pi.
 */
async function hybridSearch(root, home, h, queries, rounds, log) {
  log('vectors: embedding every item');
  const vectors = h.generateVectors(home);
  const server = await h.embeddingServer();
  try {
    const file = join(home, 'settings.json');
    const settings = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    settings.memory = { ...settings.memory, embeddings: { ...settings.memory?.embeddings, base_url: server.url, model: h.BENCH_EMBEDDING_MODEL } };
    writeFileSync(file, JSON.stringify(settings, null, 2));
    log('starting brain with embeddings');
    const t0 = performance.now();
    const { child, url } = await startBrain(root, home, await brainRuntime(root));
    const startMs = Math.round(performance.now() - t0);
    let api, rss, readyMs;
    try {
      // The index loads after the brain answers; until then search says degraded: index_loading.
      for (let i = 0; i < 600; i++) {
        const res = await fetch(`${url}/api/memory/search?q=probe&limit=1`, { headers: { authorization: `Bearer ${TOKEN}` } });
        const body = await res.json();
        if (body.degraded === null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      readyMs = Math.round(performance.now() - t0);
      rss = { idle_mib: rssMiB(child.pid) };
      await apiSearch(url, queries.slice(0, 50), 1, h);
      log('API hybrid search');
      api = await apiSearch(url, queries, rounds, h);
      rss.after_search_mib = rssMiB(child.pid);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    if (api.degraded > 0) throw new Error(`${api.degraded} hybrid searches were degraded`);
    log('vector recall against brute force');
    const recall = await h.vectorRecall(home, queries.slice(0, 50), 50);
    return { vectors: { ...vectors, dim: h.BENCH_DIM, model: h.BENCH_EMBEDDING_MODEL }, brain_start_ms: startMs, index_ready_ms: readyMs, api, rss, index: recall };
  } finally {
    await server.close();
  }
}

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[memory] ${m}\n`));
  const counts = ctx.counts ?? { notes: 100_000, episodes: 20_000, triples: 50_000 };
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base ?? tmpdir(), 'memory-'));
  const home = join(dir, 'home');
  mkdirSync(home, { mode: 0o700 });
  try {
    const h = await harness(root, dir);
    log('eval set');
    const quality = await h.evalMetrics(root, dir);
    log(`generating ${counts.notes} notes, ${counts.episodes} episodes, ${counts.triples} triples`);
    const { vocab, ms: generate_ms } = h.generateDataset(home, counts);
    const queries = h.benchQueries(vocab, ctx.queries ?? 200);
    const rounds = ctx.rounds ?? 3;
    log('starting brain');
    const { child, url } = await startBrain(root, home, await brainRuntime(root));
    let api, writes, rss;
    try {
      const rss_idle_mib = rssMiB(child.pid);
      await apiSearch(url, queries.slice(0, 50), 1, h); // warm-up (JIT, page cache, idf cache)
      log('API search');
      api = await apiSearch(url, queries, rounds, h);
      const rss_after_search_mib = rssMiB(child.pid);
      log('API note writes');
      writes = { sequential: await noteWrites(url, 1, 3000), concurrent: await noteWrites(url, 16, 3000) };
      rss = { idle_mib: rss_idle_mib, after_search_mib: rss_after_search_mib, after_writes_mib: rssMiB(child.pid) };
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    log('store ceiling');
    await h.storeCeiling(home, queries.slice(0, 50), 1); // same warm-up as the API
    const store = await h.storeCeiling(home, queries, rounds);
    const hybrid = await hybridSearch(root, home, h, queries, rounds, log);
    return {
      dataset: { ...counts, generate_ms },
      quality,
      search: { api, store: { ...store.latency, mean_results: store.mean_results } },
      hybrid,
      note_writes: { ...writes, durability: 'acknowledged after commit with synchronous=FULL (group commit)' },
      rss,
      targets: {
        api_search_p99_ms: { target: '<= 15', value: api.p99_ms, pass: api.p99_ms <= 15 },
        precision_at_5: { target: '>= 0.85', value: quality.precision_at_5, pass: quality.precision_at_5 >= 0.85 },
        recall_at_10: { target: '>= 0.9', value: quality.recall_at_10, pass: quality.recall_at_10 >= 0.9 },
        empty_answer_accuracy: { target: '>= 0.9', value: quality.empty_answer_accuracy, pass: quality.empty_answer_accuracy >= 0.9 },
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const small = process.argv.includes('--small');
  const result = await run(small ? { counts: { notes: 5000, episodes: 1000, triples: 2500 }, queries: 60, rounds: 1 } : {});
  console.log(JSON.stringify(result, null, 2));
}
