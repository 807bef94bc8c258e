// Knowledge graph (spec 1.3): subject-predicate-object triples with confidence, sources and time.
// A fact's id is a hash of its normalised parts, so the same fact from two sources (or two brains)
// is one triple: sources accumulate and confidence is their noisy-or, 1 - Π(1 - c_i).
import type { KnowledgeQuery, KnowledgeResult, Triple, TripleInput } from '../../protocol/memory';
import { LIMITS } from '../../protocol/memory';
import type { Db, Store } from '../store/store';
import { notFound } from '../kernel/errors';
import { iso, isoOrNull, tierOf } from './ids';
import type { MemoryEvents } from './memory-events';
import { currentRevision, type JournalRecorder, type JournalTriple } from './memory-journal';
import { tripleCjk } from './memory-schema';

export interface TripleRow {
  seq: number;
  id: string;
  subject: string;
  predicate: string;
  object: string;
  subject_key: string;
  predicate_key: string;
  object_key: string;
  confidence: number;
  created_at: number;
  updated_at: number;
  recall_count: number;
  recalled_at: number | null;
}

interface SourceRow {
  source: string;
  confidence: number;
  at: number;
}

// A fact's id is content-derived, the same on every brain (sync/triple-id.ts): the same fact learnt twice is one fact.
import { entityKey, tripleId } from '../../sync/triple-id';

export { entityKey, tripleId };

export const tripleText = (r: Pick<TripleRow, 'subject' | 'predicate' | 'object'>): string => `${r.subject} ${r.predicate} ${r.object}`;

export const noisyOr = (confidences: readonly number[]): number => 1 - confidences.reduce((p, c) => p * (1 - c), 1);

const DEFAULT_CONFIDENCE = 0.8;

/** The fact as the journal carries it (memory-journal.ts): with every source, no recall statistics. */
export function tripleRecord(db: Db, id: string): JournalTriple | undefined {
  const r = db.get<TripleRow>('SELECT * FROM memory_triples WHERE id = ?', [id]);
  if (!r) return undefined;
  const sources = db.all<SourceRow>('SELECT source, confidence, at FROM memory_triple_sources WHERE triple_id = ? ORDER BY source', [id]);
  return { id, subject: r.subject, predicate: r.predicate, object: r.object, confidence: r.confidence, sources, created_at: r.created_at, updated_at: r.updated_at };
}

const sameTriple = (a: JournalTriple, b: JournalTriple): boolean =>
  a.subject === b.subject && a.predicate === b.predicate && a.object === b.object && a.confidence === b.confidence && a.created_at === b.created_at && a.updated_at === b.updated_at &&
  JSON.stringify(a.sources) === JSON.stringify([...b.sources].sort((x, y) => (x.source < y.source ? -1 : x.source > y.source ? 1 : 0)));

const remove = (db: Db, id: string): boolean => {
  db.run('DELETE FROM memory_vectors WHERE item_id = ?', [id]);
  return db.run('DELETE FROM memory_triples WHERE id = ?', [id]).changes > 0;
};

/**
 * A source that is a bare memory item id (`note_…`, `ep_…`, `kg_…`) is stored as `<tier>:<id>`
 * (`note:note_…`, `episode:ep_…`, `knowledge:kg_…`), the spelling docs/memory.md asks for: the same
 * note is then one source, not two, in the noisy-or, and the wiki names it as a statement's origin.
 */
export const sourceName = (source: string): string => {
  const tier = /^[a-z]+_[0-9a-z]+$/.test(source) ? tierOf(source) : undefined;
  return tier ? `${tier}:${source}` : source;
};

export class KnowledgeGraph {
  constructor(
    private readonly store: Store,
    private readonly events: MemoryEvents,
    private readonly journal: JournalRecorder,
    private readonly clock: () => number = Date.now,
  ) {}

  async add(triples: readonly TripleInput[], source: string): Promise<Triple[]> {
    const now = this.clock();
    const named = sourceName(source);
    const revisions = await this.store.write((db) => {
      const asserted = new Set(triples.map((t) => this.assert(db, t, named, now)));
      return new Map([...asserted].map((id) => [id, this.journal.record(db, { kind: 'triple.put', id, record: tripleRecord(db, id)! }, now)]));
    });
    const rows = [...revisions.keys()].map((id) => this.row(id)!);
    for (const r of rows) this.events.emit({ kind: 'upsert', tier: 'knowledge', id: r.id, text: tripleText(r), revision: revisions.get(r.id)! });
    return rows.map((r) => this.toTriple(r));
  }

  private assert(db: Db, t: TripleInput, source: string, now: number): string {
    const id = tripleId(t.subject, t.predicate, t.object);
    const conf = t.confidence ?? DEFAULT_CONFIDENCE;
    db.run(
      `INSERT INTO memory_triples (id, subject, predicate, object, subject_key, predicate_key, object_key, confidence, created_at, updated_at, cjk)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at`,
      [id, t.subject.trim(), t.predicate.trim(), t.object.trim(), entityKey(t.subject), entityKey(t.predicate), entityKey(t.object), conf, now, now, tripleCjk(t.subject, t.predicate, t.object)],
    );
    db.run('INSERT INTO memory_triple_sources (triple_id, source, confidence, at) VALUES (?, ?, ?, ?) ON CONFLICT(triple_id, source) DO UPDATE SET confidence = excluded.confidence, at = excluded.at', [id, source, conf, now]);
    const all = db.all<{ confidence: number }>('SELECT confidence FROM memory_triple_sources WHERE triple_id = ?', [id]);
    db.run('UPDATE memory_triples SET confidence = ? WHERE id = ?', [noisyOr(all.map((s) => s.confidence)), id]);
    return id;
  }

  row(id: string): TripleRow | undefined {
    return this.store.get<TripleRow>('SELECT * FROM memory_triples WHERE id = ?', [id]);
  }

  get(id: string): Triple | undefined {
    const r = this.row(id);
    return r ? this.toTriple(r) : undefined;
  }

  /** Sets the confidence by hand; a later assertion from any source recomputes it from the sources. */
  async setConfidence(id: string, confidence: number): Promise<Triple> {
    const now = this.clock();
    const revision = await this.store.write((db) => {
      if (db.run('UPDATE memory_triples SET confidence = ?, updated_at = ? WHERE id = ?', [confidence, now, id]).changes === 0) throw notFound('triple', id);
      return this.journal.record(db, { kind: 'triple.put', id, record: tripleRecord(db, id)! }, now);
    });
    // The wiki shows confidences; the vector index and term statistics have nothing to redo.
    this.events.emit({ kind: 'annotate', tier: 'knowledge', id, revision });
    return this.get(id)!;
  }

  async delete(id: string): Promise<boolean> {
    const now = this.clock();
    const revision = await this.store.write((db) => (remove(db, id) ? this.journal.record(db, { kind: 'triple.delete', id }, now) : null));
    if (revision !== null) this.events.emit({ kind: 'delete', tier: 'knowledge', id, revision });
    return revision !== null;
  }

  /**
   * A fact received from another brain (Memory.applyRemote), stored as sent — parts, confidence and
   * exactly its sources — and not journaled again. Refuses a fact whose id is not the hash of its
   * parts (it would overwrite another fact). False when this brain already holds exactly that version.
   */
  async putRemote(t: JournalTriple): Promise<boolean> {
    if (t.id !== tripleId(t.subject, t.predicate, t.object)) throw new Error(`${t.id} is not the id of the fact "${tripleText(t)}"`);
    const change = await this.store.write((db) => {
      const before = tripleRecord(db, t.id);
      if (before && sameTriple(before, t)) return null;
      db.run(
        `INSERT INTO memory_triples (id, subject, predicate, object, subject_key, predicate_key, object_key, confidence, created_at, updated_at, cjk) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET subject = excluded.subject, predicate = excluded.predicate, object = excluded.object, confidence = excluded.confidence,
           created_at = excluded.created_at, updated_at = excluded.updated_at, cjk = excluded.cjk`,
        [t.id, t.subject, t.predicate, t.object, entityKey(t.subject), entityKey(t.predicate), entityKey(t.object), t.confidence, t.created_at, t.updated_at, tripleCjk(t.subject, t.predicate, t.object)],
      );
      db.run('DELETE FROM memory_triple_sources WHERE triple_id = ?', [t.id]);
      for (const s of t.sources) db.run('INSERT INTO memory_triple_sources (triple_id, source, confidence, at) VALUES (?, ?, ?, ?)', [t.id, s.source, s.confidence, s.at]);
      return { kind: before && tripleText(before) === tripleText(t) ? ('annotate' as const) : ('upsert' as const), revision: currentRevision(db) };
    });
    if (change?.kind === 'annotate') this.events.emit({ kind: 'annotate', tier: 'knowledge', id: t.id, revision: change.revision });
    else if (change?.kind === 'upsert') this.events.emit({ kind: 'upsert', tier: 'knowledge', id: t.id, text: tripleText(t), revision: change.revision });
    return change !== null;
  }

  /** A fact delete received from another brain; false when it was not here. */
  async deleteRemote(id: string): Promise<boolean> {
    const revision = await this.store.write((db) => (remove(db, id) ? currentRevision(db) : null));
    if (revision !== null) this.events.emit({ kind: 'delete', tier: 'knowledge', id, revision });
    return revision !== null;
  }

  /** Filter on exact (normalised) subject/predicate/object, then follow `depth` hops through shared entities. */
  query(q: KnowledgeQuery): KnowledgeResult {
    const limit = q.limit ?? LIMITS.page.default;
    const depth = q.depth ?? LIMITS.knowledgeDepth.default;
    const found = new Map<string, { row: TripleRow; hop: number }>();
    const direct = this.filter(q, limit + 1);
    for (const row of direct) found.set(row.id, { row, hop: 0 });
    let frontier = direct;
    for (let hop = 1; hop <= depth && frontier.length > 0 && found.size <= limit; hop++) {
      const entities = [...new Set(frontier.flatMap((r) => [r.subject_key, r.object_key]))];
      frontier = this.touching(entities, limit + 1 - found.size + frontier.length).filter((r) => !found.has(r.id));
      for (const row of frontier) found.set(row.id, { row, hop });
    }
    const all = [...found.values()];
    return { triples: all.slice(0, limit).map(({ row, hop }) => ({ ...this.toTriple(row), hop })), truncated: all.length > limit };
  }

  private filter(q: KnowledgeQuery, limit: number): TripleRow[] {
    const where: string[] = [];
    const params: string[] = [];
    for (const part of ['subject', 'predicate', 'object'] as const) {
      const v = q[part];
      if (v === undefined) continue;
      where.push(`${part}_key = ?`);
      params.push(entityKey(v));
    }
    return this.store.all<TripleRow>(`SELECT * FROM memory_triples WHERE ${where.length ? where.join(' AND ') : '1'} ORDER BY confidence DESC, updated_at DESC LIMIT ?`, [...params, limit]);
  }

  private touching(entities: readonly string[], limit: number): TripleRow[] {
    if (entities.length === 0) return [];
    const marks = entities.map(() => '?').join(', ');
    return this.store.all<TripleRow>(
      `SELECT * FROM memory_triples WHERE subject_key IN (${marks}) UNION SELECT * FROM memory_triples WHERE object_key IN (${marks}) ORDER BY confidence DESC LIMIT ?`,
      [...entities, ...entities, limit],
    );
  }

  toTriple(r: TripleRow): Triple {
    const sources = this.store.all<SourceRow>('SELECT source, confidence, at FROM memory_triple_sources WHERE triple_id = ? ORDER BY at', [r.id]);
    return {
      id: r.id,
      tier: 'knowledge',
      subject: r.subject,
      predicate: r.predicate,
      object: r.object,
      confidence: r.confidence,
      sources: sources.map((s) => ({ source: s.source, confidence: s.confidence, at: iso(s.at) })),
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
      recall: { count: r.recall_count, last_at: isoOrNull(r.recalled_at) },
    };
  }
}
