// In-process parts of the memory benchmark (bench/sections/memory.mjs bundles this file with esbuild):
// a fast bulk generator for the 100k-note dataset, the store-level search "ceiling", and the eval.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { createMemory } from '../../../daemon/memory/create-memory';
import { MEMORY_MIGRATIONS } from '../../../daemon/memory/memory-schema';
import { newId } from '../../../daemon/memory/ids';
import { entityKey, tripleId } from '../../../daemon/memory/knowledge-graph';
import { memorySettings } from './memory-fixture';
import { TIERS } from '../../../daemon/memory/tier-tables';
import { VectorIndex, signCode, toBlob } from '../../../daemon/memory/vector-index';
import { tierOf } from '../../../daemon/memory/ids';
import { evaluate, loadEvalSet, loadItems, type EvalMetrics } from './search-eval';

// mulberry32: a seeded PRNG whose state stays within 32-bit integer arithmetic.
let seed = 7;
function rand(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const SYL = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'ber', 'dan', 'fel', 'gor', 'hin', 'jor', 'kel', 'lum', 'mar', 'nor', 'pel', 'qua', 'ris', 'sten', 'tal', 'ulm', 'ven', 'wil', 'xan', 'yor', 'zet'];
/** A synthetic vocabulary (pseudo-words) sampled with Zipf's law, like natural text. */
export function vocabulary(size: number): string[] {
  const out = new Set<string>();
  while (out.size < size) out.add(Array.from({ length: 2 + Math.floor(rand() * 3) }, () => SYL[Math.floor(rand() * SYL.length)]).join(''));
  return [...out];
}
const zipf = (n: number): number => Math.min(n - 1, Math.floor(Math.pow(n + 1, rand()) - 1));
const sentence = (vocab: string[], words: number): string => Array.from({ length: words }, () => vocab[zipf(vocab.length)]).join(' ');

export interface DatasetCounts {
  notes: number;
  episodes: number;
  triples: number;
}

/** Bulk-loads a dataset straight into $home/brain.db in big transactions. Returns the vocabulary used. */
export function generateDataset(home: string, counts: DatasetCounts): { vocab: string[]; ms: number } {
  const t0 = performance.now();
  const vocab = vocabulary(20_000);
  const store = new SqliteStore(join(home, 'brain.db'), { groupCommit: false });
  store.migrate('memory', MEMORY_MIGRATIONS);
  const now = Date.now();
  const chunk = 20_000;
  const ago = (): number => now - Math.floor(rand() * 3 * 365 * 86_400_000);
  for (let done = 0; done < counts.notes; done += chunk) {
    store.transaction((db) => {
      for (let i = done; i < Math.min(counts.notes, done + chunk); i++) {
        const at = ago();
        db.run('INSERT INTO memory_notes (id, text, source, tags, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [newId('note', at), sentence(vocab, 6 + Math.floor(rand() * 14)), 'user', '', at, at]);
      }
    });
  }
  for (let done = 0; done < counts.episodes; done += chunk) {
    store.transaction((db) => {
      for (let i = done; i < Math.min(counts.episodes, done + chunk); i++) {
        const at = ago();
        db.run('INSERT INTO memory_episodes (id, session_id, summary, reason, summariser, message_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [newId('ep', at), `s${i}`, sentence(vocab, 30 + Math.floor(rand() * 40)), 'session_end', 'extractive', 12, at]);
      }
    });
  }
  const entities = vocab.slice(0, 5000);
  const predicates = vocab.slice(5000, 5040);
  for (let done = 0; done < counts.triples; done += chunk) {
    store.transaction((db) => {
      for (let i = done; i < Math.min(counts.triples, done + chunk); i++) {
        const [s, p, o] = [entities[zipf(entities.length)]!, predicates[Math.floor(rand() * predicates.length)]!, `${entities[zipf(entities.length)]!} ${i}`];
        const id = tripleId(s, p, o);
        const at = ago();
        db.run('INSERT OR IGNORE INTO memory_triples (id, subject, predicate, object, subject_key, predicate_key, object_key, confidence, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [id, s, p, o, entityKey(s), entityKey(p), entityKey(o), 0.8, at, at]);
        db.run('INSERT OR IGNORE INTO memory_triple_sources (triple_id, source, confidence, at) VALUES (?, ?, ?, ?)', [id, 'bench', 0.8, at]);
      }
    });
  }
  store.exec("INSERT INTO memory_notes_fts(memory_notes_fts) VALUES ('optimize'); INSERT INTO memory_episodes_fts(memory_episodes_fts) VALUES ('optimize'); INSERT INTO memory_triples_fts(memory_triples_fts) VALUES ('optimize');");
  store.close();
  return { vocab, ms: Math.round(performance.now() - t0) };
}

/** Queries of 1-3 words drawn like the text (common and rare words), a fifth with a word never stored. */
export function benchQueries(vocab: string[], n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const words = Array.from({ length: 1 + (i % 3) }, () => vocab[zipf(vocab.length)]!);
    if (i % 5 === 4) words.push(`zzq${i}`);
    return words.join(' ');
  });
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
export const latency = (ms: number[]): { p50_ms: number; p99_ms: number; max_ms: number; n: number } => {
  const s = [...ms].sort((a, b) => a - b);
  const r = (x: number): number => Math.round(x * 100) / 100;
  return { p50_ms: r(percentile(s, 50)), p99_ms: r(percentile(s, 99)), max_ms: r(s[s.length - 1]!), n: s.length };
};

/** The same queries straight against the store (no HTTP, no JSON): the ceiling for the API numbers. */
export async function storeCeiling(home: string, queries: string[], rounds: number): Promise<{ latency: ReturnType<typeof latency>; mean_results: number }> {
  const store = new SqliteStore(join(home, 'brain.db'));
  const cap = createMemory({ store, settings: memorySettings(), logger: pino({ level: 'silent' }) });
  const times: number[] = [];
  let results = 0;
  for (let r = 0; r < rounds; r++) {
    for (const q of queries) {
      const t = performance.now();
      const res = await cap.memory.search(q, { limit: 10 });
      times.push(performance.now() - t);
      results += res.results.length;
    }
  }
  await cap.recalls.stop();
  store.close();
  return { latency: latency(times), mean_results: Math.round((results / times.length) * 100) / 100 };
}

export async function evalMetrics(root: string, home: string): Promise<Omit<EvalMetrics, 'failures'> & { failures: string[] }> {
  const clock = { now: Date.now() };
  const store = new SqliteStore(join(home, 'eval.db'));
  const cap = createMemory({ store, settings: memorySettings(), logger: pino({ level: 'silent' }), clock: () => clock.now });
  const set = loadEvalSet(root);
  const m = await evaluate(cap, set, await loadItems(cap, set, clock));
  await cap.recalls.stop();
  store.close();
  return { ...m, failures: m.failures.map((f) => `${f.q} → expected ${f.expected.join(',') || '(nothing)'}, got ${f.got.join(',') || '(nothing)'}`) };
}

// ---- vectors at scale -------------------------------------------------------------------------
// A stand-in for an embedding model with the geometry that matters here: every word has a fixed dense
// Gaussian direction (seeded by the word), and a text's vector is the sum of its words' directions, so
// texts that share words point the same way and unrelated texts are near-orthogonal, as with real
// models. The brain gets the same function over /v1/embeddings (embeddingServer below).
export const BENCH_EMBEDDING_MODEL = 'bench-pseudo-384';
export const BENCH_DIM = 384;
const wordVectors = new Map<string, Float32Array>();

function wordVector(word: string): Float32Array {
  let v = wordVectors.get(word);
  if (v) return v;
  let h = 2166136261;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
  let s = h | 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (((t ^ (t >>> 14)) >>> 0) + 1) / 4294967297;
  };
  v = new Float32Array(BENCH_DIM);
  for (let j = 0; j < BENCH_DIM; j++) v[j] = Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
  wordVectors.set(word, v);
  return v;
}

export function pseudoEmbedding(text: string): Float32Array {
  const out = new Float32Array(BENCH_DIM);
  for (const w of text.toLowerCase().split(/[^a-z0-9]+/)) {
    if (!w) continue;
    const v = wordVector(w);
    for (let j = 0; j < BENCH_DIM; j++) out[j]! += v[j]!;
  }
  return out;
}

/** Embeds every item of $home/brain.db into memory_vectors (vector and sign code), as the indexer would. */
export function generateVectors(home: string): { ms: number; count: number } {
  const t0 = performance.now();
  const store = new SqliteStore(join(home, 'brain.db'), { groupCommit: false });
  store.migrate('memory', MEMORY_MIGRATIONS);
  let count = 0;
  for (const t of TIERS) {
    const rows = store.all<{ id: string; text: string }>(`SELECT id, ${t.text} AS text FROM ${t.table}`);
    for (let done = 0; done < rows.length; done += 10_000) {
      store.transaction((db) => {
        for (const r of rows.slice(done, done + 10_000)) {
          const v = pseudoEmbedding(r.text);
          db.run('INSERT INTO memory_vectors (item_id, model, dim, vec, code) VALUES (?, ?, ?, ?, ?)', [r.id, BENCH_EMBEDDING_MODEL, BENCH_DIM, toBlob(v), toBlob(signCode(v))]);
          count++;
        }
      });
    }
  }
  store.close();
  return { ms: Math.round(performance.now() - t0), count };
}

/** A loopback server speaking OpenAI's /v1/embeddings with pseudoEmbedding. */
export async function embeddingServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const { input, model } = JSON.parse(body) as { input: string | string[]; model: string };
      const inputs = Array.isArray(input) ? input : [input];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', model, data: inputs.map((t, index) => ({ object: 'embedding', index, embedding: [...pseudoEmbedding(t)] })), usage: { prompt_tokens: 0, total_tokens: 0 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, close: () => new Promise((r) => server.close(() => r())) };
}

/**
 * Recall@k of the index (sign-code ranking, exact re-scoring) against brute-force cosine over every
 * stored vector, and the in-process latency of nearest().
 */
export async function vectorRecall(
  home: string,
  queries: string[],
  k: number,
): Promise<{ recall_at_k: number; recall_at_10: number; k: number; queries: number; nearest: ReturnType<typeof latency>; brute_force: ReturnType<typeof latency> }> {
  const store = new SqliteStore(join(home, 'brain.db'));
  const index = new VectorIndex(store, BENCH_EMBEDDING_MODEL);
  await index.load(tierOf);
  const ids: string[] = [];
  const all = new Float32Array(index.size * BENCH_DIM);
  for (const r of store.all<{ item_id: string; vec: Uint8Array }>('SELECT item_id, vec FROM memory_vectors WHERE model = ?', [BENCH_EMBEDDING_MODEL])) {
    all.set(new Float32Array(r.vec.buffer, r.vec.byteOffset, BENCH_DIM), ids.length * BENCH_DIM);
    ids.push(r.item_id);
  }
  let found = 0;
  let found10 = 0;
  const fast: number[] = [];
  const slow: number[] = [];
  for (const q of queries) {
    const v = pseudoEmbedding(q);
    let t = performance.now();
    const hits = index.nearest(v, k);
    fast.push(performance.now() - t);
    t = performance.now();
    let qn = 0;
    for (let j = 0; j < BENCH_DIM; j++) qn += v[j]! * v[j]!;
    const scored: { id: string; s: number }[] = [];
    for (let i = 0; i < ids.length; i++) {
      let dot = 0;
      let n = 0;
      for (let j = 0, b = i * BENCH_DIM; j < BENCH_DIM; j++) {
        dot += v[j]! * all[b + j]!;
        n += all[b + j]! * all[b + j]!;
      }
      scored.push({ id: ids[i]!, s: n > 0 && qn > 0 ? dot / Math.sqrt(n * qn) : 0 });
    }
    const ranked = scored.sort((a, b) => b.s - a.s);
    const exact = new Set(ranked.slice(0, k).map((x) => x.id));
    const exact10 = new Set(ranked.slice(0, 10).map((x) => x.id));
    slow.push(performance.now() - t);
    found += hits.filter((h) => exact.has(h.id)).length;
    found10 += hits.slice(0, 10).filter((h) => exact10.has(h.id)).length;
  }
  store.close();
  return { recall_at_k: Math.round((found / (queries.length * k)) * 1000) / 1000, recall_at_10: Math.round((found10 / (queries.length * 10)) * 1000) / 1000, k, queries: queries.length, nearest: latency(fast), brute_force: latency(slow) };
}
