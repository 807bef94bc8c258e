// Search across the persistent tiers (spec 4.4, 2.9). Hybrid ranking: lexical coverage from FTS5 and,
// when an embedding provider is configured, cosine similarity from the vector index, fused as a
// noisy-or of the two calibrated scores (not reciprocal-rank fusion: RRF throws away the absolute
// score the relevance floor needs). Then decay and a small recency bonus scale the result. When the
// embedding call fails or is slow, the answer is lexical and says so in `degraded`.
import type { SearchResponse, SearchResultItem, Tier, Degraded } from '../../protocol/memory';
import type { Store } from '../store/store';
import { decayFactor, retention, type DecayStore, type RecallTracker } from './decay';
import { EmbeddingError, type Embedder } from './embedder';
import { iso } from './ids';
import { lexicalMatches, rowsByIds, type CandidateRow } from './lexical-match';
import { documentStems, queryTerms } from './query-terms';
import { inReadTransaction } from './read-transaction';
import type { TermStats } from './term-stats';
import type { VectorIndex } from './vector-index';

export interface SearchTuning {
  /** Items whose fused match score is below this are not returned (the "nothing matches" answer). */
  floor: number;
  /** Share of relevance that depends on how recent the item is. */
  recencyWeight: number;
  recencyDays: number;
  candidateCap: number;
  /** Cosine at or below which two texts count as unrelated for the configured model. */
  minSimilarity: number;
  /** Longest the query embedding may take before search answers lexically (degraded). */
  embedTimeoutMs: number;
  vectorCandidates: number;
}

export const DEFAULT_TUNING: SearchTuning = { floor: 0.55, recencyWeight: 0.1, recencyDays: 30, candidateCap: 128, minSimilarity: 0.3, embedTimeoutMs: 300, vectorCandidates: 50 };

export interface SearchDeps {
  store: Store;
  stats: TermStats;
  decay: DecayStore;
  recalls: RecallTracker;
  vectors?: { index: VectorIndex; embedder: Embedder } | undefined;
  tuning: SearchTuning;
  clock?: () => number;
}

interface Fused extends CandidateRow {
  tier: Tier;
  coverage: number;
  lexical: number;
  semantic: number | null;
}

interface Ranked {
  f: Fused;
  relevance: number;
  retention: number;
}

const DAY_MS = 86_400_000;
/** Share of a note's or fact's content words an episode must hold to count as repeating it. */
const REPEAT_SHARE = 0.75;

/**
 * Notes and facts answer; an episode that merely repeats one of them ("User: remember that … /
 * Assistant: I'll remember that …") ranks just below it (issue 9 item 14). Only the window of the
 * top results is compared, so this costs a few dozen tokenizations at most. True when it moved any.
 */
function demoteRepeats(window: Ranked[]): boolean {
  const answers = window.filter((r) => r.f.tier !== 'episode');
  const episodes = window.filter((r) => r.f.tier === 'episode');
  if (answers.length === 0 || episodes.length === 0) return false;
  const answerStems = answers.map((a) => ({ a, stems: queryTerms(a.f.summary).map((t) => t.stem) }));
  let moved = false;
  for (const e of episodes) {
    const held = documentStems(e.f.summary);
    for (const { a, stems } of answerStems) {
      if (stems.length === 0 || e.relevance < a.relevance) continue;
      if (stems.filter((st) => held.has(st)).length / stems.length < REPEAT_SHARE) continue;
      e.relevance = round(Math.max(0, a.relevance - 1e-4));
      moved = true;
    }
  }
  return moved;
}

export class MemorySearch {
  private readonly clock: () => number;

  constructor(private readonly deps: SearchDeps) {
    this.clock = deps.clock ?? Date.now;
  }

  async search(q: string, opts: { limit: number; signal?: AbortSignal | undefined }): Promise<SearchResponse> {
    const terms = queryTerms(q);
    const vectors = this.deps.vectors;
    const embedding = vectors?.index.ready && q.trim() !== '' ? this.embedQuery(q, opts.signal) : undefined;
    const { tuning } = this.deps;
    const lexical = inReadTransaction(this.deps.store, () => lexicalMatches(this.deps.store, this.deps.stats, terms, { floor: tuning.floor, cap: tuning.candidateCap }));
    const fused = new Map<string, Fused>(lexical.map((s) => [s.id, { ...s, semantic: null }]));
    let degraded: Degraded | null = vectors && !vectors.index.ready ? { component: 'embeddings', reason: 'index_loading' } : null;
    let mode: SearchResponse['mode'] = 'lexical';
    if (embedding) {
      const result = await embedding;
      if ('reason' in result) degraded = { component: 'embeddings', reason: result.reason };
      else {
        mode = 'hybrid';
        this.addSemantic(fused, result.vector);
      }
    }
    const now = this.clock();
    const params = this.deps.decay.get();
    const ranked: Ranked[] = [];
    for (const f of fused.values()) {
      const semantic = f.semantic ?? 0;
      // The floor judges how much of the query an item answers (coverage, not the focus nudge).
      if (1 - (1 - f.coverage) * (1 - semantic) < tuning.floor) continue;
      const match = 1 - (1 - f.lexical) * (1 - semantic);
      const r = retention(params, f, now);
      const recency = Math.exp(-Math.max(0, now - f.created_at) / (tuning.recencyDays * DAY_MS));
      ranked.push({ f, retention: r, relevance: round(match * decayFactor(params, r) * (1 - tuning.recencyWeight + tuning.recencyWeight * recency)) });
    }
    const order = (a: Ranked, b: Ranked): number => b.relevance - a.relevance || b.f.created_at - a.f.created_at;
    ranked.sort(order);
    if (demoteRepeats(ranked.slice(0, 2 * opts.limit))) ranked.sort(order);
    const top: SearchResultItem[] = ranked.slice(0, opts.limit).map(({ f, relevance, retention: r }) => ({
      id: f.id,
      timestamp: iso(f.created_at),
      summary: f.summary,
      relevance,
      tier: f.tier,
      signals: { lexical: round(f.lexical), semantic: f.semantic === null ? null : round(f.semantic), decay: round(r) },
    }));
    this.deps.recalls.record(top, now);
    return { results: top, mode, degraded };
  }

  private async embedQuery(q: string, signal: AbortSignal | undefined): Promise<{ vector: Float32Array } | { reason: string }> {
    try {
      const [vector] = await this.deps.vectors!.embedder.embed([q], { timeoutMs: this.deps.tuning.embedTimeoutMs, ...(signal ? { signal } : {}) });
      return { vector: vector! };
    } catch (err) {
      if (err instanceof EmbeddingError) return { reason: err.reason };
      throw err;
    }
  }

  private addSemantic(fused: Map<string, Fused>, vector: Float32Array): void {
    const { index } = this.deps.vectors!;
    const { minSimilarity, vectorCandidates } = this.deps.tuning;
    const calibrate = (cos: number): number => Math.max(0, Math.min(1, (cos - minSimilarity) / (1 - minSimilarity)));
    const hits = index.nearest(vector, vectorCandidates);
    const missing = new Map<Tier, string[]>();
    for (const h of hits) {
      const f = fused.get(h.id);
      if (f) f.semantic = calibrate(h.cosine);
      else if (calibrate(h.cosine) > 0) missing.set(h.tier, [...(missing.get(h.tier) ?? []), h.id]);
    }
    const cosines = new Map(hits.map((h) => [h.id, h.cosine]));
    for (const [tier, ids] of missing) {
      for (const row of rowsByIds(this.deps.store, tier, ids)) fused.set(row.id, { ...row, tier, coverage: 0, lexical: 0, semantic: calibrate(cosines.get(row.id) ?? 0) });
    }
  }
}

const round = (x: number): number => Math.round(x * 1e4) / 1e4;
