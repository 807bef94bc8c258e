// Semantic search over years of memory on a Pi. The float vectors stay in SQLite (memory_vectors.vec);
// RAM holds one sign bit per dimension (memory_vectors.code): at 384 dimensions 48 bytes an item, so
// 120k items take 5.5 MiB instead of the 176 MiB a Float32 copy would. A query ranks every item by
// the Hamming distance between sign codes (a cheap estimate of the angle between two vectors; the
// distances come from a WebAssembly kernel, hamming-kernel.ts), then re-scores the nearest
// `oversample` by exact cosine from their stored vectors, fetched by rowid. Measured recall of that
// against brute force, and latency, in bench/sections/memory.mjs and docs/memory.md.
import type { Store } from '../store/store';
import type { Tier } from '../../protocol/memory';
import { HammingKernel } from './hamming-kernel';

export interface VectorHit {
  id: string;
  tier: Tier;
  cosine: number;
}

export const toBlob = (v: Float32Array | Uint32Array): Uint8Array => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
// SQLite hands each BLOB over as a fresh Uint8Array, so an aligned one is viewed, not copied.
const aligned = (b: Uint8Array): ArrayBuffer => (b.byteOffset % 4 === 0 ? (b.buffer as ArrayBuffer) : b.slice().buffer);
const offsetOf = (b: Uint8Array): number => (b.byteOffset % 4 === 0 ? b.byteOffset : 0);
export const fromBlob = (b: Uint8Array): Float32Array => new Float32Array(aligned(b), offsetOf(b), b.byteLength >>> 2);
const codeFromBlob = (b: Uint8Array): Uint32Array => new Uint32Array(aligned(b), offsetOf(b), b.byteLength >>> 2);

/** One bit per dimension, set where the component is positive, packed into 32-bit words. */
export function signCode(v: Float32Array): Uint32Array {
  const code = new Uint32Array(Math.ceil(v.length / 32));
  for (let j = 0; j < v.length; j++) if (v[j]! > 0) code[j >>> 5]! |= 1 << (j & 31);
  return code;
}

function norm(v: Float32Array): number {
  let sum = 0;
  for (let j = 0; j < v.length; j++) sum += v[j]! * v[j]!;
  return Math.sqrt(sum);
}

/** Cosine of `b` with a query whose norm is already known. */
function cosine(q: Float32Array, qNorm: number, b: Float32Array): number {
  let dot = 0;
  let nb = 0;
  for (let j = 0; j < q.length; j++) {
    dot += q[j]! * b[j]!;
    nb += b[j]! * b[j]!;
  }
  return qNorm === 0 || nb === 0 ? 0 : dot / (qNorm * Math.sqrt(nb));
}

export class VectorIndex {
  private kernel: HammingKernel | undefined;
  private ids: string[] = [];
  private tiers: Tier[] = [];
  /** memory_vectors.rowid of each row, for the re-scoring fetch. */
  private rowids: number[] = [];
  private readonly row = new Map<string, number>();
  dim = 0;
  /** False while load() runs: search then answers lexically and says so (degraded: index_loading). */
  ready = false;

  /** `oversample`: how many Hamming-nearest items are re-scored exactly per query (at least k). */
  constructor(
    private readonly store: Store,
    private readonly model: string,
    private readonly oversample = 256,
  ) {}

  get size(): number {
    return this.ids.length;
  }

  /**
   * Loads the codes of every stored vector of the model, a page at a time so 100k rows never sit in
   * memory as row objects at once, yielding between pages so the brain answers while it loads (1-2 s
   * at 170k vectors on this machine). Rows from before codes existed get one.
   */
  async load(tierOf: (id: string) => Tier | undefined): Promise<void> {
    const missing: { rowid: number; code: Uint32Array }[] = [];
    // Pages in item_id order come from the covering index memory_vectors_code, never the vectors' pages.
    for (let after = ''; ; ) {
      const page = this.store.all<{ rowid: number; item_id: string; dim: number; code: Uint8Array | null }>(
        'SELECT rowid, item_id, dim, code FROM memory_vectors WHERE model = ? AND item_id > ? ORDER BY item_id LIMIT 2000',
        [this.model, after],
      );
      if (page.length === 0) break;
      after = page[page.length - 1]!.item_id;
      for (const r of page) {
        const tier = tierOf(r.item_id);
        if (!tier) continue;
        let code = r.code ? codeFromBlob(r.code) : undefined;
        if (!code) {
          const vec = this.store.get<{ vec: Uint8Array }>('SELECT vec FROM memory_vectors WHERE rowid = ?', [r.rowid]);
          if (!vec) continue;
          code = signCode(fromBlob(vec.vec));
          missing.push({ rowid: r.rowid, code });
        }
        this.putCode(r.item_id, r.rowid, tier, r.dim, code);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (missing.length > 0) await this.store.write((db) => missing.forEach((m) => db.run('UPDATE memory_vectors SET code = ? WHERE rowid = ?', [toBlob(m.code), m.rowid])));
    this.ready = true;
  }

  /** Adds or replaces an item whose vector the caller has stored in memory_vectors (the row is looked up). */
  put(id: string, tier: Tier, vector: Float32Array): void {
    const stored = this.store.get<{ rowid: number }>('SELECT rowid FROM memory_vectors WHERE item_id = ? AND model = ?', [id, this.model]);
    if (stored) this.putCode(id, stored.rowid, tier, vector.length, signCode(vector));
  }

  private putCode(id: string, rowid: number, tier: Tier, dim: number, code: Uint32Array): void {
    this.kernel ??= new HammingKernel(Math.ceil(dim / 64));
    if (this.dim === 0) this.dim = dim;
    if (dim !== this.dim || code.length !== Math.ceil(dim / 32)) return; // a model that changed its size mid-run: ignored until re-indexed
    let i = this.row.get(id);
    if (i === undefined) {
      i = this.ids.length;
      this.kernel.reserve(i + 1, i);
      this.ids.push(id);
      this.tiers.push(tier);
      this.rowids.push(rowid);
      this.row.set(id, i);
    }
    this.rowids[i] = rowid;
    this.kernel.set(i, code);
  }

  delete(id: string): void {
    const i = this.row.get(id);
    if (i === undefined) return;
    const last = this.ids.length - 1;
    if (i !== last) {
      this.kernel!.move(last, i);
      this.ids[i] = this.ids[last]!;
      this.tiers[i] = this.tiers[last]!;
      this.rowids[i] = this.rowids[last]!;
      this.row.set(this.ids[i], i);
    }
    this.ids.pop();
    this.tiers.pop();
    this.rowids.pop();
    this.row.delete(id);
  }

  has(id: string): boolean {
    return this.row.has(id);
  }

  /** The k nearest items by cosine similarity, best first. */
  nearest(query: Float32Array, k: number): VectorHit[] {
    if (query.length !== this.dim || this.ids.length === 0 || k <= 0) return [];
    const rows = this.hammingNearest(signCode(query), Math.max(k, this.oversample));
    const index = new Map(rows.map((i) => [this.rowids[i]!, i]));
    const stored = this.store.all<{ rowid: number; vec: Uint8Array }>('SELECT rowid, vec FROM memory_vectors WHERE rowid IN (SELECT value FROM json_each(?))', [JSON.stringify([...index.keys()])]);
    const hits: VectorHit[] = [];
    const qNorm = norm(query);
    for (const r of stored) {
      const i = index.get(r.rowid);
      const vec = fromBlob(r.vec);
      if (i !== undefined && vec.length === query.length) hits.push({ id: this.ids[i]!, tier: this.tiers[i]!, cosine: cosine(query, qNorm, vec) });
    }
    return hits.sort((a, b) => b.cosine - a.cosine).slice(0, k);
  }

  /** Rows of the `n` codes nearest to `q` in Hamming distance (ties at the cut-off broken by row). */
  private hammingNearest(q: Uint32Array, n: number): number[] {
    const count = this.ids.length;
    const distance = this.kernel!.distancesTo(q, count);
    const histogram = new Uint32Array(this.dim + 1);
    for (let i = 0; i < count; i++) histogram[distance[i]!]!++;
    let cutoff = 0;
    for (let seen = 0; cutoff <= this.dim && seen + histogram[cutoff]! < n; cutoff++) seen += histogram[cutoff]!;
    const out: number[] = [];
    const atCutoff: number[] = [];
    for (let i = 0; i < count; i++) {
      if (distance[i]! < cutoff) out.push(i);
      else if (distance[i] === cutoff) atCutoff.push(i);
    }
    return out.concat(atCutoff.slice(0, n - out.length));
  }
}
