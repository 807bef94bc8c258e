// Episodes (spec 1.3): automatically generated conversation summaries, persistent, full-text
// searchable. Written by episode-writer.ts; listed newest first with keyset pagination (spec 4.4).
import type { Episode, EpisodeReason } from '../../protocol/memory';
import type { Db, Store } from '../store/store';
import { cjkIndexText } from './cjk-segmenter';
import { iso, isoOrNull, newId } from './ids';
import type { EpisodeInput, EpisodeSink } from './episode-writer';
import type { MemoryEvents } from './memory-events';
import { currentRevision, type JournalEpisode, type JournalRecorder } from './memory-journal';
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

/** The episode as the journal carries it (memory-journal.ts): content only, no recall statistics. */
export const episodeRecord = (r: EpisodeRow): JournalEpisode => ({
  id: r.id,
  session_id: r.session_id,
  summary: r.summary,
  reason: r.reason as EpisodeReason,
  summariser: r.summariser,
  message_count: r.message_count,
  started_at: r.started_at,
  ended_at: r.ended_at,
  created_at: r.created_at,
  searchable: (r.searchable ?? 1) === 1,
});

const sameEpisode = (r: EpisodeRow, e: JournalEpisode): boolean =>
  r.session_id === e.session_id && r.summary === e.summary && r.reason === e.reason && r.summariser === e.summariser && r.message_count === e.message_count &&
  r.started_at === e.started_at && r.ended_at === e.ended_at && r.created_at === e.created_at && (r.searchable ?? 1) === (e.searchable ? 1 : 0);

const remove = (db: Db, id: string): boolean => {
  db.run('DELETE FROM memory_vectors WHERE item_id = ?', [id]);
  return db.run('DELETE FROM memory_episodes WHERE id = ?', [id]).changes > 0;
};

export class EpisodeRepository implements EpisodeSink {
  constructor(
    private readonly store: Store,
    private readonly events: MemoryEvents,
    private readonly journal: JournalRecorder,
    private readonly clock: () => number = Date.now,
  ) {}

  async addEpisode(input: EpisodeInput): Promise<Episode> {
    const now = this.clock();
    const row: EpisodeRow = {
      seq: 0, id: newId('ep', now), session_id: input.sessionId, summary: input.summary, reason: input.reason, summariser: input.summariser,
      message_count: input.messageCount, started_at: input.startedAt, ended_at: input.endedAt, created_at: now, recall_count: 0, recalled_at: null,
    };
    const searchable = (input.searchable ?? true) ? 1 : 0;
    row.searchable = searchable;
    const revision = await this.store.write((db) => {
      row.seq = Number(
        db.run(
          'INSERT INTO memory_episodes (id, session_id, summary, reason, summariser, message_count, started_at, ended_at, created_at, searchable, cjk) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [row.id, row.session_id, row.summary, row.reason, row.summariser, row.message_count, row.started_at, row.ended_at, now, searchable, cjkIndexText(row.summary)],
        ).lastInsertRowid,
      );
      return this.journal.record(db, { kind: 'episode.put', id: row.id, record: episodeRecord(row) }, now);
    });
    // An episode kept out of search is nothing the vector index, term statistics or wiki follow.
    if (searchable === 1) this.events.emit({ kind: 'upsert', tier: 'episode', id: row.id, text: row.summary, revision });
    return episodeFromRow(row);
  }

  get(id: string): Episode | undefined {
    const r = this.store.get<EpisodeRow>('SELECT * FROM memory_episodes WHERE id = ?', [id]);
    return r ? episodeFromRow(r) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    const now = this.clock();
    const revision = await this.store.write((db) => (remove(db, id) ? this.journal.record(db, { kind: 'episode.delete', id }, now) : null));
    if (revision !== null) this.events.emit({ kind: 'delete', tier: 'episode', id, revision });
    return revision !== null;
  }

  /**
   * An episode put received from another brain (Memory.applyRemote): stored under its id as sent,
   * not journaled again. False when this brain already holds exactly that version.
   */
  async putRemote(e: JournalEpisode): Promise<boolean> {
    const searchable = e.searchable ? 1 : 0;
    const before = await this.store.write((db) => {
      const r = db.get<EpisodeRow>('SELECT * FROM memory_episodes WHERE id = ?', [e.id]);
      if (r && sameEpisode(r, e)) return null;
      const params = [e.session_id, e.summary, e.reason, e.summariser, e.message_count, e.started_at, e.ended_at, e.created_at, searchable, cjkIndexText(e.summary), e.id];
      if (r) db.run('UPDATE memory_episodes SET session_id = ?, summary = ?, reason = ?, summariser = ?, message_count = ?, started_at = ?, ended_at = ?, created_at = ?, searchable = ?, cjk = ? WHERE id = ?', params);
      else db.run('INSERT INTO memory_episodes (session_id, summary, reason, summariser, message_count, started_at, ended_at, created_at, searchable, cjk, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', params);
      return { searchable: r ? (r.searchable ?? 1) === 1 : false, revision: currentRevision(db) };
    });
    if (!before) return false;
    // As addEpisode: what is out of search is nothing the derived parts follow (and leaves them when it goes out).
    if (e.searchable) this.events.emit({ kind: 'upsert', tier: 'episode', id: e.id, text: e.summary, revision: before.revision });
    else if (before.searchable) this.events.emit({ kind: 'delete', tier: 'episode', id: e.id, revision: before.revision });
    return true;
  }

  /** An episode delete received from another brain; false when it was not here. */
  async deleteRemote(id: string): Promise<boolean> {
    const revision = await this.store.write((db) => (remove(db, id) ? currentRevision(db) : null));
    if (revision !== null) this.events.emit({ kind: 'delete', tier: 'episode', id, revision });
    return revision !== null;
  }

  list(page: { cursor?: string | undefined; limit: number }): { items: Episode[]; next_cursor: string | null } {
    const { where, params } = olderThan(page.cursor);
    const rows = this.store.all<EpisodeRow>(`SELECT * FROM memory_episodes WHERE ${where} ORDER BY created_at DESC, seq DESC LIMIT ?`, [...params, page.limit + 1]);
    return toPage(rows, page.limit, episodeFromRow);
  }
}
