// Notes (spec 1.3): created by the user, persistent, full-text searchable. A write resolves only when
// it is durable (Store.write), which is what POST /api/memory/note acknowledges.
import type { Note, NoteUpdate } from '../../protocol/memory';
import type { Db, Store } from '../store/store';
import { notFound } from '../kernel/errors';
import { iso, isoOrNull, newId } from './ids';
import type { MemoryEvents } from './memory-events';
import { noteCjk } from './memory-schema';
import { noteKey } from './note-key';
import type { Forgetting } from './forgetting';
import { currentRevision, type JournalNote, type JournalRecorder } from './memory-journal';
import { olderThan, toPage } from './pagination';

export interface NoteRow {
  seq: number;
  id: string;
  text: string;
  source: string;
  tags: string;
  created_at: number;
  updated_at: number;
  recall_count: number;
  recalled_at: number | null;
}

export const noteFromRow = (r: NoteRow): Note => ({
  id: r.id,
  tier: 'note',
  text: r.text,
  source: r.source,
  tags: r.tags === '' ? [] : (JSON.parse(r.tags) as string[]),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  recall: { count: r.recall_count, last_at: isoOrNull(r.recalled_at) },
});

/** The note as the journal carries it (memory-journal.ts): content only, no recall statistics. */
export const noteRecord = (r: NoteRow): JournalNote => ({
  id: r.id,
  text: r.text,
  source: r.source,
  tags: r.tags === '' ? [] : (JSON.parse(r.tags) as string[]),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const tagsText = (tags: readonly string[]): string => (tags.length === 0 ? '' : JSON.stringify([...new Set(tags.map((t) => t.trim()).filter(Boolean))]));
/** What search and the vector index see of a note: its text and its tags. */
export const noteSearchText = (r: Pick<NoteRow, 'text' | 'tags'>): string => (r.tags === '' ? r.text : `${r.text} ${(JSON.parse(r.tags) as string[]).join(' ')}`);

/** The earlier note of a sentence remembered again: refreshed, its tags the union of both. */
function refresh(db: Db, r: NoteRow, tags: readonly string[], now: number): { row: NoteRow; changed: boolean } {
  const merged = tagsText([...(r.tags === '' ? [] : (JSON.parse(r.tags) as string[])), ...tags]);
  const row: NoteRow = { ...r, tags: merged, updated_at: now, recall_count: r.recall_count + 1, recalled_at: now };
  db.run('UPDATE memory_notes SET tags = ?, cjk = ?, updated_at = ?, recall_count = recall_count + 1, recalled_at = ? WHERE seq = ?', [merged, noteCjk(r.text, merged), now, now, r.seq]);
  return { row, changed: merged !== r.tags };
}

export class NoteRepository {
  constructor(
    private readonly store: Store,
    private readonly events: MemoryEvents,
    private readonly journal: JournalRecorder,
    private readonly clock: () => number = Date.now,
    private readonly forgetting?: Forgetting,
  ) {}

  /**
   * Stores a note. The same sentence again (note-key.ts: case, spacing, closing punctuation aside)
   * stores nothing new: the earlier note is refreshed instead (updated_at, and a recall, so its
   * retention restarts) and gains any new tags. Looked up inside the write, so two concurrent
   * remembers of one sentence still make one note.
   */
  async add(input: { text: string; source?: string | undefined; tags?: readonly string[] | undefined }): Promise<Note> {
    const now = this.clock();
    const key = noteKey(input.text);
    const { row, changed, revision } = await this.store.write((db) => {
      const same = db.get<NoteRow>('SELECT * FROM memory_notes WHERE text_key = ? ORDER BY seq DESC LIMIT 1', [key]);
      if (same) {
        const refreshed = refresh(db, same, input.tags ?? [], now);
        return { ...refreshed, revision: this.journal.record(db, { kind: 'note.put', id: same.id, record: noteRecord(refreshed.row) }, now) };
      }
      const r: NoteRow = { seq: 0, id: newId('note', now), text: input.text, source: input.source ?? 'user', tags: tagsText(input.tags ?? []), created_at: now, updated_at: now, recall_count: 0, recalled_at: null };
      r.seq = Number(db.run('INSERT INTO memory_notes (id, text, source, tags, created_at, updated_at, text_key, cjk) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [r.id, r.text, r.source, r.tags, now, now, key, noteCjk(r.text, r.tags)]).lastInsertRowid);
      return { row: r, changed: true, revision: this.journal.record(db, { kind: 'note.put', id: r.id, record: noteRecord(r) }, now) };
    });
    if (changed) this.events.emit({ kind: 'upsert', tier: 'note', id: row.id, text: noteSearchText(row), revision });
    return noteFromRow(row);
  }

  row(id: string): NoteRow | undefined {
    return this.store.get<NoteRow>('SELECT * FROM memory_notes WHERE id = ?', [id]);
  }

  get(id: string): Note | undefined {
    const r = this.row(id);
    return r ? noteFromRow(r) : undefined;
  }

  async update(id: string, patch: NoteUpdate): Promise<Note> {
    const now = this.clock();
    const { row, revision } = await this.store.write((db) => {
      const r = db.get<NoteRow>('SELECT * FROM memory_notes WHERE id = ?', [id]);
      if (!r) throw notFound('note', id);
      const next: NoteRow = { ...r, text: patch.text ?? r.text, tags: patch.tags ? tagsText(patch.tags) : r.tags, updated_at: now };
      db.run('UPDATE memory_notes SET text = ?, tags = ?, cjk = ?, updated_at = ?, text_key = ? WHERE seq = ?', [next.text, next.tags, noteCjk(next.text, next.tags), now, noteKey(next.text), r.seq]);
      return { row: next, revision: this.journal.record(db, { kind: 'note.put', id, record: noteRecord(next) }, now) };
    });
    this.events.emit({ kind: 'upsert', tier: 'note', id, text: noteSearchText(row), revision });
    return noteFromRow(row);
  }

  /**
   * Deletes a note. With `forgetting` (createMemory passes it), what repeats the note in episodes and
   * facts is redacted or removed in the same transaction (forgetting.ts): deleting is forgetting.
   */
  async delete(id: string): Promise<boolean> {
    const now = this.clock();
    const changes = await this.store.write((db) => {
      const r = db.get<NoteRow>('SELECT * FROM memory_notes WHERE id = ?', [id]);
      if (!r) return null;
      db.run('DELETE FROM memory_vectors WHERE item_id = ?', [id]);
      db.run('DELETE FROM memory_notes WHERE seq = ?', [r.seq]);
      const revision = this.journal.record(db, { kind: 'note.delete', id }, now);
      return [{ kind: 'delete', tier: 'note', id, text: noteSearchText(r), revision } as const, ...(this.forgetting?.forgetNote(db, id, r.text, now) ?? [])];
    });
    for (const c of changes ?? []) this.events.emit(c);
    return changes !== null;
  }

  /**
   * A note put received from another brain (Memory.applyRemote): stored under its id as sent, without
   * the same-sentence merge and without journaling it (the sync layer logs the remote op itself).
   * False when this brain already holds exactly that version.
   */
  async putRemote(note: JournalNote): Promise<boolean> {
    const tags = note.tags.length === 0 ? '' : JSON.stringify(note.tags);
    const put = await this.store.write((db) => {
      const r = db.get<NoteRow>('SELECT * FROM memory_notes WHERE id = ?', [note.id]);
      const next: NoteRow = { seq: r?.seq ?? 0, id: note.id, text: note.text, source: note.source, tags, created_at: note.created_at, updated_at: note.updated_at, recall_count: r?.recall_count ?? 0, recalled_at: r?.recalled_at ?? null };
      const params = [next.text, next.source, tags, noteCjk(next.text, tags), next.created_at, next.updated_at, noteKey(next.text)];
      if (!r) db.run('INSERT INTO memory_notes (text, source, tags, cjk, created_at, updated_at, text_key, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [...params, note.id]);
      else if (r.text === next.text && r.source === next.source && r.tags === tags && r.created_at === next.created_at && r.updated_at === next.updated_at) return null;
      else db.run('UPDATE memory_notes SET text = ?, source = ?, tags = ?, cjk = ?, created_at = ?, updated_at = ?, text_key = ? WHERE seq = ?', [...params, r.seq]);
      return { row: next, revision: currentRevision(db) };
    });
    if (put) this.events.emit({ kind: 'upsert', tier: 'note', id: put.row.id, text: noteSearchText(put.row), revision: put.revision });
    return put !== null;
  }

  /**
   * A note delete received from another brain: the note goes and its fingerprint is kept (later
   * episodes here are redacted as on its origin), but nothing else is cascaded — what the delete
   * redacted or removed on its origin arrives as changes of their own. False when it was not here.
   */
  async deleteRemote(id: string): Promise<boolean> {
    const now = this.clock();
    const removed = await this.store.write((db) => {
      const r = db.get<NoteRow>('SELECT * FROM memory_notes WHERE id = ?', [id]);
      if (!r) return null;
      db.run('DELETE FROM memory_vectors WHERE item_id = ?', [id]);
      db.run('DELETE FROM memory_notes WHERE seq = ?', [r.seq]);
      this.forgetting?.fingerprint(db, id, r.text, now);
      return { row: r, revision: currentRevision(db) };
    });
    if (removed) this.events.emit({ kind: 'delete', tier: 'note', id, text: noteSearchText(removed.row), revision: removed.revision });
    return removed !== null;
  }

  list(page: { cursor?: string | undefined; limit: number }): { items: Note[]; next_cursor: string | null } {
    const { where, params } = olderThan(page.cursor);
    const rows = this.store.all<NoteRow>(`SELECT * FROM memory_notes WHERE ${where} ORDER BY created_at DESC, seq DESC LIMIT ?`, [...params, page.limit + 1]);
    return toPage(rows, page.limit, noteFromRow);
  }

  count(): number {
    return this.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM memory_notes')?.n ?? 0;
  }
}
