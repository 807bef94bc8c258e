// Brute-force cosine search over every item's vector, held in RAM as one contiguous Float32Array of
// unit vectors (dot product = cosine). Measured in bench/sections/memory.mjs; docs/memory.md gives
// the numbers and when to stop brute-forcing. Vectors persist in memory_vectors as Float32 BLOBs.
import type { Store } from '../store/store';
import type { Tier } from '../../protocol/memory';

export interface VectorHit {
  id: string;
  tier: Tier;
  cosine: number;
}

function normalise(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  const norm = Math.sqrt(sum) || 1;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

export const toBlob = (v: Float32Array): Uint8Array => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
export const fromBlob = (b: Uint8Array): Float32Array => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));

export class VectorIndex {
  private data = new Float32Array(0);
  private ids: string[] = [];
  private tiers: Tier[] = [];
  private readonly row = new Map<string, number>();
  dim = 0;

  get size(): number {
    return this.ids.length;
  }

  /** Loads every stored vector of `model` (start-up). */
  load(store: Store, model: string, tierOf: (id: string) => Tier | undefined): void {
    for (const r of store.all<{ item_id: string; vec: Uint8Array }>('SELECT item_id, vec FROM memory_vectors WHERE model = ?', [model])) {
      const tier = tierOf(r.item_id);
      if (tier) this.put(r.item_id, tier, fromBlob(r.vec));
    }
  }

  put(id: string, tier: Tier, vector: Float32Array): void {
    if (this.dim === 0) this.dim = vector.length;
    if (vector.length !== this.dim) return; // a model that changed its size mid-run: ignored until re-indexed
    const v = normalise(vector);
    let i = this.row.get(id);
    if (i === undefined) {
      i = this.ids.length;
      this.grow(i + 1);
      this.ids.push(id);
      this.tiers.push(tier);
      this.row.set(id, i);
    }
    this.data.set(v, i * this.dim);
  }

  delete(id: string): void {
    const i = this.row.get(id);
    if (i === undefined) return;
    const last = this.ids.length - 1;
    if (i !== last) {
      this.data.copyWithin(i * this.dim, last * this.dim, (last + 1) * this.dim);
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
    if (query.length !== this.dim || this.ids.length === 0) return [];
    const q = normalise(query);
    const d = this.dim;
    const top: { i: number; s: number }[] = [];
    for (let i = 0, n = this.ids.length; i < n; i++) {
      let s = 0;
      const base = i * d;
      for (let j = 0; j < d; j++) s += q[j]! * this.data[base + j]!;
      if (top.length < k) {
        top.push({ i, s });
        if (top.length === k) top.sort((a, b) => b.s - a.s);
      } else if (s > top[k - 1]!.s) {
        let at = k - 1;
        while (at > 0 && top[at - 1]!.s < s) at--;
        top.splice(at, 0, { i, s });
        top.pop();
      }
    }
    return top.sort((a, b) => b.s - a.s).map(({ i, s }) => ({ id: this.ids[i]!, tier: this.tiers[i]!, cosine: s }));
  }

  private grow(rows: number): void {
    if (rows * this.dim <= this.data.length) return;
    const next = new Float32Array(Math.max(rows, Math.ceil(this.ids.length * 1.5) + 64) * this.dim);
    next.set(this.data);
    this.data = next;
  }
}
