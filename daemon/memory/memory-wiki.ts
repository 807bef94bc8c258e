// The memory wiki (spec 1.3): notes, episodes and graph entries compiled into durable pages, one per
// entity (a knowledge-graph subject with at least two facts) or topic (a note tag). Every statement
// names the ids it came from. A change to or deletion of a source marks the pages built from it
// stale; a stale page is recompiled when read, and POST .../wiki/rebuild recompiles all of them.
import { createHash } from 'node:crypto';
import type { WikiPage, WikiPageSummary, WikiRebuild } from '../../protocol/memory';
import type { Store } from '../store/store';
import { notFound } from '../errors';
import { iso } from './ids';
import type { MemoryChange, MemoryEvents } from './memory-events';
import { entityKey, type TripleRow } from './knowledge-graph';

interface PageRow {
  slug: string;
  title: string;
  kind: 'entity' | 'topic';
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
const SNIPPET = 280;
const ITEM_ID = /^(note|ep|kg)_[0-9a-z]+$/;

export function slugify(title: string): string {
  const s = title.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80);
  return s || `p-${createHash('sha256').update(title).digest('hex').slice(0, 12)}`;
}

const snippet = (t: string): string => (t.length <= SNIPPET ? t : `${t.slice(0, SNIPPET - 1)}…`);

export class MemoryWiki {
  constructor(
    private readonly store: Store,
    events: MemoryEvents,
    private readonly onError: (err: unknown) => void,
    private readonly clock: () => number = Date.now,
  ) {
    events.on('memory-wiki', (c) => this.markStale(c));
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
      if (!r) throw notFound('wiki page', slug); // every source of it is gone
    }
    return { ...this.summary(r), body: JSON.parse(r.statements) as Statement[], source_ids: JSON.parse(r.source_ids) as string[] };
  }

  /** Compiles every page from the current tiers; pages left with no statement are removed. */
  async rebuild(): Promise<WikiRebuild> {
    const t0 = performance.now();
    const before = new Set(this.store.all<{ slug: string }>('SELECT slug FROM memory_wiki_pages').map((r) => r.slug));
    const entities = this.store.all<{ subject: string }>('SELECT MIN(subject) AS subject FROM memory_triples GROUP BY subject_key HAVING COUNT(*) >= 2');
    const tags = new Set(this.store.all<{ tags: string }>("SELECT tags FROM memory_notes WHERE tags != ''").flatMap((r) => JSON.parse(r.tags) as string[]));
    const built = new Set<string>();
    for (const e of entities) if (await this.compile('entity', e.subject)) built.add(slugify(e.subject));
    for (const tag of tags) if (await this.compile('topic', tag)) built.add(`topic-${slugify(tag)}`);
    const gone = [...before].filter((s) => !built.has(s));
    await this.store.write((db) => gone.forEach((s) => db.run('DELETE FROM memory_wiki_pages WHERE slug = ?', [s])));
    return { pages: built.size, removed: gone.length, ms: Math.round(performance.now() - t0) };
  }

  private summary(r: PageRow): WikiPageSummary {
    return { slug: r.slug, title: r.title, kind: r.kind, statements: (JSON.parse(r.statements) as Statement[]).length, built_at: iso(r.built_at), stale: r.stale === 1 };
  }

  /** Builds one page; false (and the page removed) when nothing supports it any more. */
  private async compile(kind: 'entity' | 'topic', title: string): Promise<boolean> {
    const slug = kind === 'entity' ? slugify(title) : `topic-${slugify(title)}`;
    const statements = kind === 'entity' ? this.entityStatements(title) : this.topicStatements(title);
    const sources = [...new Set(statements.flatMap((s) => s.sources))];
    const now = this.clock();
    await this.store.write((db) => {
      db.run('DELETE FROM memory_wiki_pages WHERE slug = ?', [slug]);
      if (statements.length === 0) return;
      db.run('INSERT INTO memory_wiki_pages (slug, title, kind, statements, source_ids, built_at, stale) VALUES (?, ?, ?, ?, ?, ?, 0)', [slug, title, kind, JSON.stringify(statements), JSON.stringify(sources), now]);
      for (const id of sources) db.run('INSERT OR IGNORE INTO memory_wiki_sources (item_id, slug) VALUES (?, ?)', [id, slug]);
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
    const out: Statement[] = facts.map((t) => ({
      text: `${t.subject} ${t.predicate} ${t.object} (confidence ${t.confidence.toFixed(2)})`,
      sources: [t.id, ...(t.srcs ?? '').split('\u001f').map((s) => s.replace(/^(note|episode):/, '')).filter((s) => ITEM_ID.test(s))],
    }));
    const phrase = `"${entity.replace(/"/g, '""')}"`;
    for (const [table, fts, col] of [['memory_notes', 'memory_notes_fts', 'text'], ['memory_episodes', 'memory_episodes_fts', 'summary']] as const) {
      const rows = this.store.all<{ id: string; body: string }>(
        `SELECT id, ${col} AS body FROM ${table} WHERE seq IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ? ORDER BY rowid DESC LIMIT ${MENTIONS})`,
        [phrase],
      );
      out.push(...rows.map((r) => ({ text: snippet(r.body), sources: [r.id] })));
    }
    return out;
  }

  private topicStatements(tag: string): Statement[] {
    const rows = this.store.all<{ id: string; text: string; tags: string }>(
      `SELECT id, text, tags FROM memory_notes WHERE seq IN (SELECT rowid FROM memory_notes_fts WHERE memory_notes_fts MATCH ? ORDER BY rowid DESC LIMIT 200)`,
      [`tags : "${tag.replace(/"/g, '""')}"`],
    );
    return rows.filter((r) => (JSON.parse(r.tags) as string[]).includes(tag)).slice(0, 100).map((r) => ({ text: snippet(r.text), sources: [r.id] }));
  }

  /**
   * A source changed or went away: every page built from it is stale. A new fact stales its subject's
   * and object's pages; a new or edited note or episode stales the entity pages whose title it
   * mentions and the topic pages of its tags. Mentions are a case-insensitive containment test, a
   * superset of the FTS phrase match the page is compiled with: a false positive only costs a recompile.
   */
  private markStale(change: MemoryChange): void {
    const itemId = change.id;
    this.store.write((db) => {
      db.run('UPDATE memory_wiki_pages SET stale = 1 WHERE slug IN (SELECT slug FROM memory_wiki_sources WHERE item_id = ?)', [itemId]);
      if (change.kind === 'upsert' && change.text && change.tier !== 'knowledge') {
        const text = change.text.toLowerCase();
        const pages = db.all<{ slug: string; title: string }>("SELECT slug, title FROM memory_wiki_pages WHERE kind = 'entity' AND stale = 0");
        for (const p of pages) if (text.includes(p.title.toLowerCase())) db.run('UPDATE memory_wiki_pages SET stale = 1 WHERE slug = ?', [p.slug]);
        const note = change.tier === 'note' ? db.get<{ tags: string }>('SELECT tags FROM memory_notes WHERE id = ?', [itemId]) : undefined;
        // Untagged notes store '' (note-repository tagsText), tagged ones a JSON array.
        for (const tag of note && note.tags !== '' ? (JSON.parse(note.tags) as string[]) : []) db.run('UPDATE memory_wiki_pages SET stale = 1 WHERE slug = ?', [`topic-${slugify(tag)}`]);
      }
      if (itemId.startsWith('kg_')) {
        const t = db.get<{ subject: string; object: string }>('SELECT subject, object FROM memory_triples WHERE id = ?', [itemId]);
        if (t) db.run('UPDATE memory_wiki_pages SET stale = 1 WHERE slug IN (?, ?)', [slugify(t.subject), slugify(t.object)]);
      }
    }).catch(this.onError);
  }
}
