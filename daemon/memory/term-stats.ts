// Document frequencies for idf weights, pooled over all tiers so a relevance means the same whatever
// tier an item is in (docs/memory.md "Relevance"). fts5vocab lookups cost ~1 ms each in WASM SQLite,
// so they are cached for a short time: idf moves slowly, and a few seconds of staleness only nudges
// weights, never which items match.
import type { Store } from '../store/store';
import { TIERS } from './tier-tables';
import { documentStems } from './query-terms';

export interface TermFrequency {
  /** Documents containing the term, per tier (keyed by tier name). */
  perTier: Record<string, number>;
  total: number;
}

// Writes drop the cached frequencies of their own words (forgetText), so a term cached as "absent"
// never hides a new item; the TTL only bounds how stale weights of other terms get.
const TTL_MS = 300_000;
const MAX_ENTRIES = 20_000;

export class TermStats {
  private readonly cache = new Map<string, { at: number; tf: TermFrequency }>();
  private counts: { at: number; perTier: Record<string, number>; total: number } | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Items per tier and in all tiers. */
  documents(): { perTier: Record<string, number>; total: number } {
    const now = this.clock();
    if (this.counts && now - this.counts.at < TTL_MS) return this.counts;
    const perTier: Record<string, number> = {};
    let total = 0;
    for (const t of TIERS) {
      const n = this.store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${t.table}`)?.n ?? 0;
      perTier[t.tier] = n;
      total += n;
    }
    this.counts = { at: now, perTier, total };
    return this.counts;
  }

  frequency(stem: string): TermFrequency {
    const now = this.clock();
    const hit = this.cache.get(stem);
    if (hit && now - hit.at < TTL_MS) return hit.tf;
    const perTier: Record<string, number> = {};
    let total = 0;
    for (const t of TIERS) {
      const n = this.store.get<{ doc: number }>(`SELECT doc FROM ${t.vocab} WHERE term = ?`, [stem])?.doc ?? 0;
      perTier[t.tier] = n;
      total += n;
    }
    const tf = { perTier, total };
    // Only word-sized stems are cached: a letter run of a whole message would make the cache hold megabytes.
    if (stem.length > 64) return tf;
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(stem, { at: now, tf });
    return tf;
  }

  /** BM25's idf, always > 0; a term no item contains weighs as much as one only a single item has. */
  idf(stem: string): number {
    const df = Math.max(1, this.frequency(stem).total);
    const n = Math.max(df, this.documents().total); // counts may lag writes by the TTL
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  /** A write changed an item holding this text: its terms' frequencies are looked up again. */
  forgetText(text: string): void {
    for (const s of documentStems(text)) this.cache.delete(s);
  }

  /** Forget cached counts (after bulk loads, and in tests that assert exact weights). */
  invalidate(): void {
    this.cache.clear();
    this.counts = undefined;
  }
}
