// The memory wiki (spec 1.3): notes and graph entries compiled into durable pages, one per entity (a
// knowledge-graph subject with at least two facts) or topic (a note tag); episodes only through the
// facts that name them as a source (chat lines do not make pages, issue 9 item 14). Every statement
// names the ids it came from. Pages follow the tiers without a rebuild (docs/memory.md, "Wiki"): a
// change that makes a page due inserts it as a stale placeholder, a change to one of its members or
// sources re-checks whether it is still due (removed when not, marked stale when so), and a stale
// page is recompiled when read. POST .../wiki/rebuild recompiles all of them.
import { createHash } from 'node:crypto';
import type { WikiPage, WikiPageSummary, WikiRebuild } from '../../protocol/memory';
import type { Db, Store } from '../store/store';
import { notFound } from '../kernel/errors';
import { clip } from '../kernel/text';
import { iso } from './ids';
import type { MemoryChange, MemoryEvents } from './memory-events';
import { entityKey, type TripleRow } from './knowledge-graph';

type Kind = 'entity' | 'topic';
interface PageRef {
  slug: string;
  title: string;
  kind: Kind;
}
interface PageRow extends PageRef {
  statements: string;
  source_ids: string;
  built_at: number;
  stale: number;
}
interface Statement {
  text: string;
  sources: string[];
}

const MENTIONS = 20;
const TOPIC_NOTES = 100;
const SNIPPET = 280;
/** How many members make a page due: an entity needs two facts, a topic one note. */
const DUE: Record<Kind, number> = { entity: 2, topic: 1 };
const ITEM_ID = /^(note|ep|kg)_[0-9a-z]+$/;
const ITEM_TABLE = { note: 'memory_notes', ep: 'memory_episodes', kg: 'memory_triples' } as const;

export function slugify(title: string): string {
  const s = title.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80);
  return s || `p-${createHash('sha256').update(title).digest('hex').slice(0, 12)}`;
}

export const pageSlug = (kind: Kind, title: string): string => (kind === 'entity' ? slugify(title) : `topic-${slugify(title)}`);

const parseTags = (tags: string): string[] => (tags === '' ? [] : (JSON.parse(tags) as string[])); // '' = untagged

/**
 * Ids of the items that make a page due: an entity's facts (as subject), a topic's notes, newest
 * first; at most `limit` of them. FTS narrows to notes whose tags hold the tag's words, json_each
 * keeps the exact tag ('' = untagged, note-repository tagsText).
 */
function members(db: Db, kind: Kind, title: string, limit = -1): string[] {
  const rows =
    kind === 'entity'
      ? db.all<{ id: string }>('SELECT id FROM memory_triples WHERE subject_key = ? LIMIT ?', [entityKey(title), limit])
      : db.all<{ id: string }>(
          `SELECT n.id FROM memory_notes n, json_each(nullif(n.tags, '')) j
           WHERE n.seq IN (SELECT rowid FROM memory_notes_fts WHERE memory_notes_fts MATCH ?) AND j.value = ? ORDER BY n.seq DESC LIMIT ?`,
          [`tags : "${title.replace(/"/g, '""')}"`, title, limit],
        );
  return rows.map((r) => r.id);
}

/** Whether a page is due, without reading all of a large entity's facts or topic's notes. */
const isDue = (db: Db, kind: Kind, title: string): boolean => members(db, kind, title, DUE[kind]).length >= DUE[kind];

/** A statement names an item only while it exists: provenance that 404s names nothing. */
function itemExists(db: Db, id: string): boolean {
  const m = ITEM_ID.exec(id);
  return m !== null && db.get(`SELECT 1 AS x FROM ${ITEM_TABLE[m[1] as keyof typeof ITEM_TABLE]} WHERE id = ?`, [id]) !== undefined;
}

export class MemoryWiki {
  constructor(
    private readonly store: Store,
    events: MemoryEvents,
    private readonly onError: (err: unknown) => void,
    private readonly clock: () => number = Date.now,
  ) {
    events.on('memory-wiki', (c) => this.follow(c));
  }

  list(): WikiPageSummary[] {
    return this.store.all<PageRow>('SELECT * FROM memory_wiki_pages ORDER BY kind, title').map((r) => this.summary(r));
  }

  async read(slug: string): Promise<WikiPage> {
    let r = this.store.get<PageRow>('SELECT * FROM memory_wiki_pages WHERE slug = ?', [slug]);
    if (!r) throw notFound('wiki page', slug);
    if (r.stale) {
      await this.compile(r.kind, r.title);
      r = this.store.get<PageRow>('SELECT * FROM memory_wiki_pages WHERE slug = ?', [slug]);
      if (!r) throw notFound('wiki page', slug); // no longer due: its members are gone
    }
    return { ...this.summary(r), body: JSON.parse(r.statements) as Statement[], source_ids: JSON.parse(r.source_ids) as string[] };
  }

  /** Compiles every page from the current tiers; pages no longer due are removed. */
  async rebuild(): Promise<WikiRebuild> {
    const t0 = performance.now();
    const before = new Set(this.store.all<{ slug: string }>('SELECT slug FROM memory_wiki_pages').map((r) => r.slug));
    const entities = this.store.all<{ subject: string }>('SELECT MIN(subject) AS subject FROM memory_triples GROUP BY subject_key HAVING COUNT(*) >= 2');
    const tags = new Set(this.store.all<{ tags: string }>("SELECT tags FROM memory_notes WHERE tags != ''").flatMap((r) => parseTags(r.tags)));
    const built = new Set<string>();
    for (const e of entities) if (await this.compile('entity', e.subject)) built.add(pageSlug('entity', e.subject));
    for (const tag of tags) if (await this.compile('topic', tag)) built.add(pageSlug('topic', tag));
    const gone = [...before].filter((s) => !built.has(s));
    await this.store.write((db) => gone.forEach((s) => db.run('DELETE FROM memory_wiki_pages WHERE slug = ?', [s])));
    return { pages: built.size, removed: gone.length, ms: Math.round(performance.now() - t0) };
  }

  private summary(r: PageRow): WikiPageSummary {
    return { slug: r.slug, title: r.title, kind: r.kind, statements: (JSON.parse(r.statements) as Statement[]).length, built_at: iso(r.built_at), stale: r.stale === 1 };
  }

  /**
   * Builds one page; false (and the page removed) when it is no longer due. Its members are recorded
   * as sources next to the statements' ids, so deleting any of them re-checks the page (follow()).
   */
  private async compile(kind: Kind, title: string): Promise<boolean> {
    const slug = pageSlug(kind, title);
    const ids = members(this.store, kind, title);
    const due = ids.length >= DUE[kind];
    const statements = !due ? [] : kind === 'entity' ? this.entityStatements(title) : this.topicStatements(ids.slice(0, TOPIC_NOTES));
    const sources = [...new Set(statements.flatMap((s) => s.sources))];
    const now = this.clock();
    await this.store.write((db) => {
      db.run('DELETE FROM memory_wiki_pages WHERE slug = ?', [slug]);
      if (statements.length === 0) return;
      db.run('INSERT INTO memory_wiki_pages (slug, title, kind, statements, source_ids, built_at, stale) VALUES (?, ?, ?, ?, ?, ?, 0)', [slug, title, kind, JSON.stringify(statements), JSON.stringify(sources), now]);
      for (const id of new Set([...sources, ...ids])) db.run('INSERT OR IGNORE INTO memory_wiki_sources (item_id, slug) VALUES (?, ?)', [id, slug]);
    });
    return statements.length > 0;
  }

  private entityStatements(entity: string): Statement[] {
    const key = entityKey(entity);
    const facts = this.store.all<TripleRow & { srcs: string | null }>(
      `SELECT t.*, (SELECT group_concat(source, char(31)) FROM memory_triple_sources s WHERE s.triple_id = t.id) AS srcs
       FROM memory_triples t WHERE subject_key = ? OR object_key = ? ORDER BY confidence DESC, updated_at DESC LIMIT 200`,
      [key, key],
    );
    // A triple's sources name the notes and episodes it came from as `note:<id>` / `episode:<id>`
    // (knowledge-graph.ts sourceName; bare ids written before that are read the same way).
    const derived = (srcs: string | null): string[] => (srcs ?? '').split('\u001f').map((s) => s.replace(/^(note|episode|knowledge):/, '')).filter((s) => itemExists(this.store, s));
    const out: Statement[] = facts.map((t) => ({ text: `${t.subject} ${t.predicate} ${t.object} (confidence ${t.confidence.toFixed(2)})`, sources: [...new Set([t.id, ...derived(t.srcs)])] }));
    const phrase = `"${entity.replace(/"/g, '""')}"`;
    // Notes, not chat lines: an episode retells a conversation, and its lines would crowd the page.
    const rows = this.store.all<{ id: string; body: string }>(
      `SELECT id, text AS body FROM memory_notes WHERE seq IN (SELECT rowid FROM memory_notes_fts WHERE memory_notes_fts MATCH ? ORDER BY rowid DESC LIMIT ${MENTIONS})`,
      [phrase],
    );
    out.push(...rows.map((r) => ({ text: clip(r.body, SNIPPET), sources: [r.id] })));
    return out;
  }

  private topicStatements(noteIds: readonly string[]): Statement[] {
    // One statement shape whatever the count (the store caches prepared statements by SQL text).
    const rows = this.store.all<{ id: string; text: string }>('SELECT id, text FROM memory_notes WHERE id IN (SELECT value FROM json_each(?)) ORDER BY seq DESC', [JSON.stringify(noteIds)]);
    return rows.map((r) => ({ text: clip(r.text, SNIPPET), sources: [r.id] }));
  }

  /**
   * Follows one change. Pages the item is a member or source of are re-checked: removed when no longer
   * due, else marked stale. A fact makes its subject's page due at two facts and stales its object's
   * page; a note makes the topic pages of its tags due. A new or edited note or episode stales the
   * entity pages whose title it mentions: a case-insensitive containment test, a superset of the FTS
   * phrase match the page is compiled with, so a false positive only costs a recompile.
   */
  private follow(change: MemoryChange): void {
    const now = this.clock();
    this.store.write((db) => {
      const linked = db.all<PageRef>('SELECT p.slug, p.title, p.kind FROM memory_wiki_pages p JOIN memory_wiki_sources s ON s.slug = p.slug WHERE s.item_id = ?', [change.id]);
      for (const p of linked) this.recheck(db, p);
      if (change.kind === 'delete') {
        db.run('DELETE FROM memory_wiki_sources WHERE item_id = ?', [change.id]);
        return;
      }
      if (change.tier === 'knowledge') return this.factChanged(db, change.id, now);
      if (change.tier === 'episode') return; // pages are built from facts and notes only
      const text = (change.text ?? '').toLowerCase();
      const pages = db.all<{ slug: string; title: string }>("SELECT slug, title FROM memory_wiki_pages WHERE kind = 'entity' AND stale = 0");
      for (const p of pages) if (text.includes(p.title.toLowerCase())) db.run('UPDATE memory_wiki_pages SET stale = 1 WHERE slug = ?', [p.slug]);
      const note = change.tier === 'note' ? db.get<{ tags: string }>('SELECT tags FROM memory_notes WHERE id = ?', [change.id]) : undefined;
      for (const tag of note ? parseTags(note.tags) : []) this.ensure(db, 'topic', tag, change.id, now);
    }).catch(this.onError);
  }

  private factChanged(db: Db, id: string, now: number): void {
    const t = db.get<{ subject: string; object: string }>('SELECT subject, object FROM memory_triples WHERE id = ?', [id]);
    if (!t) return;
    this.ensure(db, 'entity', t.subject, id, now);
    db.run('UPDATE memory_wiki_pages SET stale = 1 WHERE slug = ?', [pageSlug('entity', t.object)]);
  }

  private recheck(db: Db, p: PageRef): void {
    if (isDue(db, p.kind, p.title)) db.run('UPDATE memory_wiki_pages SET stale = 1 WHERE slug = ?', [p.slug]);
    else db.run('DELETE FROM memory_wiki_pages WHERE slug = ?', [p.slug]);
  }

  /**
   * `member` joined the page: an existing page is marked stale and records it; a page that is now due
   * is inserted as a stale placeholder (no statements yet; read() compiles it) recording all members.
   */
  private ensure(db: Db, kind: Kind, title: string, member: string, now: number): void {
    const slug = pageSlug(kind, title);
    const record = (id: string) => db.run('INSERT OR IGNORE INTO memory_wiki_sources (item_id, slug) VALUES (?, ?)', [id, slug]);
    if (db.run('UPDATE memory_wiki_pages SET stale = 1 WHERE slug = ?', [slug]).changes > 0) {
      record(member);
      return;
    }
    if (!isDue(db, kind, title)) return;
    db.run("INSERT INTO memory_wiki_pages (slug, title, kind, statements, source_ids, built_at, stale) VALUES (?, ?, ?, '[]', '[]', ?, 1)", [slug, title, kind, now]);
    members(db, kind, title).forEach(record);
  }
}
