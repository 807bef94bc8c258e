// Keeps the vector index in step with the tiers, in the background: writes never wait for the
// embedding provider. The database is the queue (items lacking a vector of the current model), so a
// provider that is down for a day loses nothing; changes seen while running are embedded first.
import type { Logger } from 'pino';
import type { Store } from '../store/store';
import type { Tier } from '../../protocol/memory';
import type { Embedder } from './embedder';
import type { MemoryChange, MemoryEvents } from './memory-events';
import { TIERS } from './tier-tables';
import { signCode, toBlob, type VectorIndex } from './vector-index';
import { tierOf } from './ids';

const BATCH = 32;
const MAX_BACKOFF_MS = 60_000;
const DIRTY_MAX = 10_000;

export class EmbeddingIndexer {
  private readonly dirty = new Map<string, { tier: Tier; text: string }>();
  private scanNeeded = true;
  private running = false;
  private stopped = false;
  private backoffMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: { store: Store; embedder: Embedder; index: VectorIndex; events: MemoryEvents; logger: Logger },
  ) {}

  /** Returns at once: the index loads in the background (search says `index_loading` until then). */
  start(): void {
    this.deps.events.on('embedding-indexer', (c) => this.onChange(c));
    this.loading = this.deps.index.load(tierOf).then(
      () => this.kick(),
      (err: unknown) => this.deps.logger.error({ err }, 'loading the vector index failed; search stays lexical until a restart'),
    );
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Resolves when the index has loaded and nothing is waiting to be embedded (tests, bench). */
  async idle(): Promise<void> {
    await this.loading;
    for (let i = 0; i < 10_000 && (this.running || this.dirty.size > 0 || this.scanNeeded) && !this.stopped; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private onChange(c: MemoryChange): void {
    if (c.kind === 'annotate') return; // the text, and so the vector, is unchanged
    if (c.kind === 'delete') {
      this.dirty.delete(c.id);
      this.deps.index.delete(c.id);
      return;
    }
    if (this.dirty.size >= DIRTY_MAX) this.scanNeeded = true;
    else this.dirty.set(c.id, { tier: c.tier, text: c.text ?? '' });
    this.kick();
  }

  private kick(delayMs = 0): void {
    if (this.running || this.stopped || !this.deps.index.ready) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.drain(), delayMs);
    this.timer.unref();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      for (let batch = this.next(); batch.length > 0 && !this.stopped; batch = this.next()) {
        const vectors = await this.deps.embedder.embed(batch.map((b) => b.text));
        await this.deps.store.write((db) =>
          batch.forEach((b, i) =>
            db.run('INSERT INTO memory_vectors (item_id, model, dim, vec, code) VALUES (?, ?, ?, ?, ?) ON CONFLICT(item_id) DO UPDATE SET model = excluded.model, dim = excluded.dim, vec = excluded.vec, code = excluded.code', [
              b.id,
              this.deps.embedder.model,
              vectors[i]!.length,
              toBlob(vectors[i]!),
              toBlob(signCode(vectors[i]!)),
            ]),
          ),
        );
        batch.forEach((b, i) => {
          this.dirty.delete(b.id);
          this.deps.index.put(b.id, b.tier, vectors[i]!);
        });
        this.backoffMs = 0;
      }
    } catch (err) {
      this.backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(1000, this.backoffMs * 2));
      this.deps.logger.warn({ err, retryInMs: this.backoffMs }, 'embedding failed; items stay searchable by text and will be embedded later');
    } finally {
      this.running = false;
    }
    if (this.backoffMs > 0) this.kick(this.backoffMs);
  }

  private next(): { id: string; tier: Tier; text: string }[] {
    if (this.dirty.size > 0) return [...this.dirty].slice(0, BATCH).map(([id, d]) => ({ id, ...d }));
    if (!this.scanNeeded) return [];
    const out: { id: string; tier: Tier; text: string }[] = [];
    for (const t of TIERS) {
      if (out.length >= BATCH) break;
      const rows = this.deps.store.all<{ id: string; text: string }>(
        `SELECT x.id, ${t.text.replace(/\b(text|tags|summary|subject|predicate|object)\b/g, 'x.$1')} AS text FROM ${t.table} x LEFT JOIN memory_vectors v ON v.item_id = x.id AND v.model = ? WHERE v.item_id IS NULL AND ${t.searchable} LIMIT ?`,
        [this.deps.embedder.model, BATCH - out.length],
      );
      out.push(...rows.map((r) => ({ ...r, tier: t.tier })));
    }
    if (out.length === 0) this.scanNeeded = false;
    return out;
  }
}
