// In-process parts of the memory benchmark (bench/sections/memory.mjs bundles this file with esbuild):
// a fast bulk generator for the 100k-note dataset, the store-level search "ceiling", and the eval.
import { join } from 'node:path';
import { pino } from 'pino';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { createMemory } from '../../../daemon/memory/create-memory';
import { MEMORY_MIGRATIONS } from '../../../daemon/memory/memory-schema';
import { newId } from '../../../daemon/memory/ids';
import { entityKey, tripleId } from '../../../daemon/memory/knowledge-graph';
import { memorySettings } from './memory-fixture';
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
