// Semantic search over years of memory on a Pi. The float vectors stay in SQLite (memory_vectors.vec);
// RAM holds one sign bit per dimension (memory_vectors.code): at 384 dimensions 48 bytes an item, so
// 120k items take 5.5 MiB instead of the 176 MiB a Float32 copy would. A query ranks every item by
// the Hamming distance between sign codes (a cheap estimate of the angle between two vectors), then
// re-scores the nearest `oversample` by exact cosine from their stored vectors. Measured recall of
// that against brute force, and latency, in bench/sections/memory.mjs and docs/memory.md.
import type { Store } from '../store/store';
import type { Tier } from '../../protocol/memory';

export interface VectorHit {
  id: string;
  tier: Tier;
  cosine: number;
}

export const toBlob = (v: Float32Array | Uint32Array): Uint8Array => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
export const fromBlob = (b: Uint8Array): Float32Array => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
const codeFromBlob = (b: Uint8Array): Uint32Array => new Uint32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));

/** One bit per dimension, set where the component is positive, packed into 32-bit words. */
export function signCode(v: Float32Array): Uint32Array {
  const code = new Uint32Array(Math.ceil(v.length / 32));
  for (let j = 0; j < v.length; j++) if (v[j]! > 0) code[j >>> 5]! |= 1 << (j & 31);
  return code;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let j = 0; j < a.length; j++) {
    dot += a[j]! * b[j]!;
    na += a[j]! * a[j]!;
    nb += b[j]! * b[j]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

export class VectorIndex {
  private codes = new Uint32Array(0);
  private ids: string[] = [];
  private tiers: Tier[] = [];
  private readonly row = new Map<string, number>();
  dim = 0;
  private words = 0;

  /** `oversample`: how many Hamming-nearest items are re-scored exactly per query (at least k). */
  constructor(
    private readonly store: Store,
    private readonly model: string,
    private readonly oversample = 256,
  ) {}

  get size(): number {
    return this.ids.length;
  }

  /** Loads the codes of every stored vector of the model (start-up); rows from before codes existed get one. */
  async load(tierOf: (id: string) => Tier | undefined): Promise<void> {
    const missing: { id: string; code: Uint32Array }[] = [];
    for (const r of this.store.all<{ item_id: string; dim: number; code: Uint8Array | null }>('SELECT item_id, dim, code FROM memory_vectors WHERE model = ?', [this.model])) {
      const tier = tierOf(r.item_id);
      if (!tier) continue;
      let code = r.code ? codeFromBlob(r.code) : undefined;
      if (!code) {
        const vec = this.store.get<{ vec: Uint8Array }>('SELECT vec FROM memory_vectors WHERE item_id = ?', [r.item_id]);
        if (!vec) continue;
        code = signCode(fromBlob(vec.vec));
        missing.push({ id: r.item_id, code });
      }
      this.putCode(r.item_id, tier, r.dim, code);
    }
    if (missing.length > 0) await this.store.write((db) => missing.forEach((m) => db.run('UPDATE memory_vectors SET code = ? WHERE item_id = ?', [toBlob(m.code), m.id])));
  }

  /** Adds or replaces an item whose vector (and its signCode) the caller has stored in memory_vectors. */
  put(id: string, tier: Tier, vector: Float32Array): void {
    this.putCode(id, tier, vector.length, signCode(vector));
  }

  private putCode(id: string, tier: Tier, dim: number, code: Uint32Array): void {
    if (this.dim === 0) {
      this.dim = dim;
      this.words = Math.ceil(dim / 32);
    }
    if (dim !== this.dim || code.length !== this.words) return; // a model that changed its size mid-run: ignored until re-indexed
    let i = this.row.get(id);
    if (i === undefined) {
      i = this.ids.length;
      this.grow(i + 1);
      this.ids.push(id);
      this.tiers.push(tier);
      this.row.set(id, i);
    }
    this.codes.set(code, i * this.words);
  }

  delete(id: string): void {
    const i = this.row.get(id);
    if (i === undefined) return;
    const last = this.ids.length - 1;
    if (i !== last) {
      this.codes.copyWithin(i * this.words, last * this.words, (last + 1) * this.words);
      this.ids[i] = this.ids[last]!;
      this.tiers[i] = this.tiers[last]!;
      this.row.set(this.ids[i], i);
    }
    this.ids.pop();
    this.tiers.pop();
    this.row.delete(id);
  }

  has(id: string): boolean {
    return this.row.has(id);
  }

  /** The k nearest items by cosine similarity, best first. */
  nearest(query: Float32Array, k: number): VectorHit[] {
    if (query.length !== this.dim || this.ids.length === 0 || k <= 0) return [];
    const rows = this.hammingNearest(signCode(query), Math.max(k, this.oversample));
    const index = new Map(rows.map((i) => [this.ids[i]!, i]));
    const stored = this.store.all<{ item_id: string; vec: Uint8Array }>('SELECT item_id, vec FROM memory_vectors WHERE item_id IN (SELECT value FROM json_each(?)) AND model = ?', [JSON.stringify([...index.keys()]), this.model]);
    const hits: VectorHit[] = [];
    for (const r of stored) {
      const i = index.get(r.item_id);
      if (i !== undefined) hits.push({ id: r.item_id, tier: this.tiers[i]!, cosine: cosine(query, fromBlob(r.vec)) });
    }
    return hits.sort((a, b) => b.cosine - a.cosine).slice(0, k);
  }

  /** Rows of the `n` codes nearest to `q` in Hamming distance (ties at the cut-off broken by row). */
  private hammingNearest(q: Uint32Array, n: number): number[] {
    const count = this.ids.length;
    const w = this.words;
    const distance = new Uint16Array(count);
    const histogram = new Uint32Array(this.dim + 1);
    for (let i = 0, base = 0; i < count; i++, base += w) {
      let d = 0;
      for (let j = 0; j < w; j++) d += popcount(q[j]! ^ this.codes[base + j]!);
      distance[i] = d;
      histogram[d]!++;
    }
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

  private grow(rows: number): void {
    if (rows * this.words <= this.codes.length) return;
    const next = new Uint32Array(Math.max(rows, Math.ceil(this.ids.length * 1.5) + 64) * this.words);
    next.set(this.codes);
    this.codes = next;
  }
}
