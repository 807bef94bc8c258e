// `svc memory backend`: what memory is stored in and how search ranks, with an optional live probe of
// the embedding provider (one tiny /v1/embeddings call, bounded by the query timeout).
import type { BackendReport } from '../../protocol/memory';
import type { MemoryCapability } from './create-memory';
import { EmbeddingError } from './embedder';

export async function backendReport(cap: MemoryCapability, probe: boolean): Promise<BackendReport> {
  const store = cap.store;
  const count = (table: string): number => store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`)?.n ?? 0;
  const e = cap.settings.embeddings;
  let probed: BackendReport['embeddings']['probe'] = null;
  if (probe && cap.embedder) {
    const t = performance.now();
    try {
      await cap.embedder.embed(['probe'], { timeoutMs: Math.max(1000, e.query_timeout_ms) });
      probed = { ok: true, ms: Math.round(performance.now() - t), reason: null };
    } catch (err) {
      if (!(err instanceof EmbeddingError)) throw err;
      probed = { ok: false, ms: Math.round(performance.now() - t), reason: err.reason };
    }
  }
  return {
    store: { engine: 'sqlite-fts5', tokenizer: 'porter unicode61 remove_diacritics 2', path: store.path },
    counts: { notes: count('memory_notes'), episodes: count('memory_episodes'), triples: count('memory_triples'), wiki_pages: count('memory_wiki_pages'), snapshots: count('memory_snapshots') },
    embeddings: {
      configured: cap.embedder !== undefined,
      base_url: e.base_url ?? null,
      model: cap.embedder?.model ?? null,
      indexed: cap.vectors?.size ?? 0,
      index_ready: cap.vectors?.ready ?? false,
      dim: cap.vectors && cap.vectors.dim > 0 ? cap.vectors.dim : null,
      probe: probed,
    },
    search: { relevance_floor: cap.settings.search.relevance_floor, recency_weight: cap.settings.search.recency_weight, query_timeout_ms: e.query_timeout_ms },
  };
}
