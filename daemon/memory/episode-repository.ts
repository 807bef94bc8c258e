// Episodes (spec 1.3): automatically generated conversation summaries, persistent, full-text
// searchable. Written by episode-writer.ts; listed newest first with keyset pagination (spec 4.4).
import type { Episode, EpisodeReason } from '../../protocol/memory';
import type { Store } from '../store/store';
import { cjkIndexText } from './cjk-segmenter';
import { iso, isoOrNull, newId } from './ids';
import type { EpisodeInput, EpisodeSink } from './episode-writer';
import type { MemoryEvents } from './memory-events';
import { olderThan, toPage } from './pagination';

export interface EpisodeRow {
  seq: number;
  id: string;
  session_id: string | null;
  summary: string;
  reason: string;
  summariser: string;
  message_count: number;
  started_at: number | null;
  ended_at: number | null;
  created_at: number;
  recall_count: number;
  recalled_at: number | null;
  searchable?: number;
}

export const episodeFromRow = (r: EpisodeRow): Episode => ({
  id: r.id,
  tier: 'episode',
  session_id: r.session_id,
  summary: r.summary,
  reason: r.reason as EpisodeReason,
  summariser: r.summariser,
  message_count: r.message_count,
  started_at: isoOrNull(r.started_at),
  ended_at: isoOrNull(r.ended_at),
  created_at: iso(r.created_at),
  recall: { count: r.recall_count, last_at: isoOrNull(r.recalled_at) },
});

export class EpisodeRepository implements EpisodeSink {
  constructor(
    private readonly store: Store,
    private readonly events: MemoryEvents,
    private readonly clock: () => number = Date.now,
  ) {}

  async addEpisode(input: EpisodeInput): Promise<Episode> {
    const now = this.clock();
    const row: EpisodeRow = {
      seq: 0, id: newId('ep', now), session_id: input.sessionId, summary: input.summary, reason: input.reason, summariser: input.summariser,
      message_count: input.messageCount, started_at: input.startedAt, ended_at: input.endedAt, created_at: now, recall_count: 0, recalled_at: null,
    };
    const searchable = input.searchable ?? true;
    row.seq = await this.store.write((db) =>
      Number(
        db.run(
          'INSERT INTO memory_episodes (id, session_id, summary, reason, summariser, message_count, started_at, ended_at, created_at, searchable, cjk) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [row.id, row.session_id, row.summary, row.reason, row.summariser, row.message_count, row.started_at, row.ended_at, now, searchable ? 1 : 0, cjkIndexText(row.summary)],
        ).lastInsertRowid,
      ),
    );
    // An episode kept out of search is nothing the vector index, term statistics or wiki follow.
    if (searchable) this.events.emit({ kind: 'upsert', tier: 'episode', id: row.id, text: row.summary });
    return episodeFromRow(row);
  }

  get(id: string): Episode | undefined {
    const r = this.store.get<EpisodeRow>('SELECT * FROM memory_episodes WHERE id = ?', [id]);
    return r ? episodeFromRow(r) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    const changes = await this.store.write((db) => {
      db.run('DELETE FROM memory_vectors WHERE item_id = ?', [id]);
      return db.run('DELETE FROM memory_episodes WHERE id = ?', [id]).changes;
    });
    if (changes > 0) this.events.emit({ kind: 'delete', tier: 'episode', id });
    return changes > 0;
  }

  list(page: { cursor?: string | undefined; limit: number }): { items: Episode[]; next_cursor: string | null } {
    const { where, params } = olderThan(page.cursor);
    const rows = this.store.all<EpisodeRow>(`SELECT * FROM memory_episodes WHERE ${where} ORDER BY created_at DESC, seq DESC LIMIT ?`, [...params, page.limit + 1]);
    return toPage(rows, page.limit, episodeFromRow);
  }
}
