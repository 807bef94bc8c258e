// Forgetting a note (issue 9 item 3) forgets what was derived from it, in the same transaction as the
// delete: sentences of episodes that repeat the note are redacted (an episode with nothing else left
// goes), facts the note is the only source of go (other sources keep them, with the note's share of
// the confidence taken out), and facts whose own words repeat the note go too. A fingerprint of the
// note (hashed stems with their idf weights, never the words) is kept, so later episodes — the
// conversation in which the user said "forget …" included — are redacted before they are stored.
// "Repeats" means what search means by a match: the sentence holds at least the relevance floor's
// share of the note's idf-weighted terms (docs/memory.md, "Forgetting"). Every episode and fact it
// changes is journaled in that transaction (memory-journal.ts); the fingerprint is derived data and is not.
import { createHash } from 'node:crypto';
import type { Db, Store } from '../store/store';
import { cjkIndexText } from './cjk-segmenter';
import { episodeRecord, type EpisodeRow } from './episode-repository';
import { noisyOr, tripleRecord, tripleText } from './knowledge-graph';
import type { MemoryChange } from './memory-events';
import type { JournalRecorder } from './memory-journal';
import { documentStems, ftsExpression, queryTerms } from './query-terms';
import type { TermStats } from './term-stats';
import { contentWords } from '../kernel/text';

/** A forgotten note's terms: hashed stem → idf weight at the time it was forgotten. */
export type Fingerprint = ReadonlyMap<string, number>;

export const REDACTED = '[forgotten]';
/** Most items of a tier looked at per forgotten note (newest first): forgetting stays bounded. */
const SCAN_LIMIT = 2000;
/** Most fingerprints a new episode is checked against (the newest). */
const FINGERPRINTS_MAX = 1000;
const SENTENCE_BREAK = /(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])\s*|\n+/u;
const SPEAKER = /^(user|assistant)$/;

const hashStem = (stem: string): string => createHash('sha256').update(stem).digest('hex').slice(0, 16);

/** The idf-weighted share of the fingerprint's terms a text holds, in [0, 1]. */
export function coverage(text: string, print: Fingerprint): number {
  let total = 0;
  for (const w of print.values()) total += w;
  if (total <= 0) return 0;
  let got = 0;
  for (const s of documentStems(text)) got += print.get(hashStem(s)) ?? 0;
  return got / total;
}

/**
 * The text with every sentence that repeats one of the fingerprints replaced by REDACTED; `empty`
 * when no sentence with content of its own is left.
 */
export function redactText(text: string, prints: readonly Fingerprint[], floor: number): { text: string; changed: boolean; empty: boolean } {
  if (prints.length === 0) return { text, changed: false, empty: false };
  let changed = false;
  let kept = 0;
  const out = text.split(SENTENCE_BREAK).map((sentence) => {
    if (prints.some((p) => coverage(sentence, p) >= floor)) {
      changed = true;
      return REDACTED;
    }
    if (contentWords(sentence).some((w) => !SPEAKER.test(w))) kept++;
    return sentence;
  });
  return { text: changed ? out.join(' ') : text, changed, empty: kept === 0 };
}

export class Forgetting {
  constructor(
    private readonly store: Store,
    private readonly stats: TermStats,
    private readonly floor: number,
    private readonly journal: JournalRecorder,
  ) {}

  /**
   * Runs inside the transaction that deletes note `id` (whose text was `text`): records its
   * fingerprint and redacts or removes what repeats it. Returns the changes to announce after the commit.
   */
  forgetNote(db: Db, id: string, text: string, now: number): MemoryChange[] {
    const terms = queryTerms(text);
    const print = this.keep(db, id, terms, now);
    if (!print) return [];
    const match = ftsExpression(terms, 'OR');
    return [...this.redactEpisodes(db, match, print, now), ...this.dropFacts(db, id, match, print, now)];
  }

  /**
   * Records the fingerprint of note `id` (whose text was `text`) so later episodes are redacted, and
   * nothing else: for a note deleted on another brain, whose redactions arrive from there.
   */
  fingerprint(db: Db, id: string, text: string, now: number): void {
    this.keep(db, id, queryTerms(text), now);
  }

  private keep(db: Db, id: string, terms: ReturnType<typeof queryTerms>, now: number): Fingerprint | undefined {
    if (terms.length === 0) return undefined;
    const print = new Map(terms.map((t) => [hashStem(t.stem), this.stats.idf(t.stem)]));
    db.run('INSERT OR REPLACE INTO memory_forgotten (id, terms, created_at) VALUES (?, ?, ?)', [id, JSON.stringify([...print]), now]);
    return print;
  }

  /** A new episode's text with what was forgotten redacted (episode-writer.ts calls it). */
  redact(text: string): string {
    return redactText(text, this.fingerprints(), this.floor).text;
  }

  private fingerprints(): Fingerprint[] {
    const rows = this.store.all<{ terms: string }>('SELECT terms FROM memory_forgotten ORDER BY created_at DESC LIMIT ?', [FINGERPRINTS_MAX]);
    return rows.map((r) => new Map(JSON.parse(r.terms) as [string, number][]));
  }

  private redactEpisodes(db: Db, match: string, print: Fingerprint, now: number): MemoryChange[] {
    // Episodes kept out of search (trivial sessions) are not in the FTS index: they are read directly.
    const rows = db.all<{ seq: number; id: string; summary: string }>(
      `SELECT seq, id, summary FROM memory_episodes WHERE seq IN (SELECT rowid FROM memory_episodes_fts WHERE memory_episodes_fts MATCH ? ORDER BY rowid DESC LIMIT ?)
       UNION ALL SELECT * FROM (SELECT seq, id, summary FROM memory_episodes WHERE searchable = 0 ORDER BY seq DESC LIMIT ?)`,
      [match, SCAN_LIMIT, SCAN_LIMIT],
    );
    const changes: MemoryChange[] = [];
    for (const r of rows) {
      const red = redactText(r.summary, [print], this.floor);
      if (!red.changed) continue;
      this.stats.forgetText(r.summary);
      if (red.empty) {
        this.deleteItem(db, 'memory_episodes', r.id);
        changes.push({ kind: 'delete', tier: 'episode', id: r.id, revision: this.journal.record(db, { kind: 'episode.delete', id: r.id }, now) });
      } else {
        db.run('UPDATE memory_episodes SET summary = ?, cjk = ? WHERE seq = ?', [red.text, cjkIndexText(red.text), r.seq]);
        const redacted = db.get<EpisodeRow>('SELECT * FROM memory_episodes WHERE seq = ?', [r.seq])!;
        changes.push({ kind: 'upsert', tier: 'episode', id: r.id, text: red.text, revision: this.journal.record(db, { kind: 'episode.put', id: r.id, record: episodeRecord(redacted) }, now) });
      }
    }
    return changes;
  }

  /** Facts sourced only from the note, or whose own words repeat it, go; others lose the note's share. */
  private dropFacts(db: Db, noteId: string, match: string, print: Fingerprint, now: number): MemoryChange[] {
    const sourced = db.all<{ triple_id: string }>('SELECT triple_id FROM memory_triple_sources WHERE source IN (?, ?)', [`note:${noteId}`, noteId]).map((r) => r.triple_id);
    db.run('DELETE FROM memory_triple_sources WHERE source IN (?, ?)', [`note:${noteId}`, noteId]);
    const repeating = db
      .all<{ id: string; subject: string; predicate: string; object: string }>(
        'SELECT id, subject, predicate, object FROM memory_triples WHERE seq IN (SELECT rowid FROM memory_triples_fts WHERE memory_triples_fts MATCH ? ORDER BY rowid DESC LIMIT ?)',
        [match, SCAN_LIMIT],
      )
      .filter((t) => coverage(tripleText(t), print) >= this.floor)
      .map((t) => t.id);
    const changes: MemoryChange[] = [];
    for (const id of new Set([...sourced, ...repeating])) {
      const left = db.all<{ confidence: number; source: string }>('SELECT confidence, source FROM memory_triple_sources WHERE triple_id = ?', [id]);
      // A fact that repeats the note goes only when nothing but conversation backs it (the turn or
      // episode that repeated the note): one the user asserted on its own, or another note, keeps it.
      if (left.length === 0 || (repeating.includes(id) && left.every((s) => fromConversation(s.source)))) {
        this.deleteItem(db, 'memory_triples', id);
        changes.push({ kind: 'delete', tier: 'knowledge', id, revision: this.journal.record(db, { kind: 'triple.delete', id }, now) });
      } else {
        db.run('UPDATE memory_triples SET confidence = ? WHERE id = ?', [noisyOr(left.map((s) => s.confidence)), id]);
        const record = tripleRecord(db, id)!;
        changes.push({ kind: 'annotate', tier: 'knowledge', id, revision: this.journal.record(db, { kind: 'triple.put', id, record }, now) });
      }
    }
    return changes;
  }

  private deleteItem(db: Db, table: 'memory_episodes' | 'memory_triples', id: string): void {
    db.run('DELETE FROM memory_vectors WHERE item_id = ?', [id]);
    db.run(`DELETE FROM ${table} WHERE id = ?`, [id]);
  }
}

/** Sources that are a conversation repeating what was said (a turn, a session, an episode), not an assertion of their own. */
const fromConversation = (source: string): boolean => /^(turn|session|episode):|^ep_/.test(source);
