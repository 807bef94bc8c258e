// Memory tables (component 'memory', numbered migrations; never renumber a released one). Items keep
// an integer `seq` (the FTS5 rowid) next to their public string id. Timestamps are epoch ms.
// FTS5 tables are external-content indexes kept in step by triggers, tokenized like kernel/text.ts +
// porter-stemmer.ts (docs/memory.md, "Search").
import type { Db, Migration } from '../store/store';
import { cjkIndexText } from './cjk-segmenter';
import { noteKey } from './note-key';

const TOKENIZE = "tokenize='porter unicode61 remove_diacritics 2'";

/** The triggers keeping an external-content FTS5 table in step with its table, one statement each. */
const ftsTriggers = (table: string, fts: string, cols: readonly string[]): string[] => {
  const list = cols.join(', ');
  const newVals = cols.map((c) => `new.${c}`).join(', ');
  const oldVals = cols.map((c) => `old.${c}`).join(', ');
  return [
    `CREATE TRIGGER ${table}_ai AFTER INSERT ON ${table} BEGIN
    INSERT INTO ${fts}(rowid, ${list}) VALUES (new.seq, ${newVals});
  END`,
    `CREATE TRIGGER ${table}_ad AFTER DELETE ON ${table} BEGIN
    INSERT INTO ${fts}(${fts}, rowid, ${list}) VALUES ('delete', old.seq, ${oldVals});
  END`,
    `CREATE TRIGGER ${table}_au AFTER UPDATE OF ${list} ON ${table} BEGIN
    INSERT INTO ${fts}(${fts}, rowid, ${list}) VALUES ('delete', old.seq, ${oldVals});
    INSERT INTO ${fts}(rowid, ${list}) VALUES (new.seq, ${newVals});
  END`,
  ];
};
const ftsSync = (table: string, fts: string, cols: readonly string[]): string => `${ftsTriggers(table, fts, cols).join(';\n')};`;

/** The CJK column of a note (its text and its tags), an episode, a triple: cjk-segmenter.ts. */
export const noteCjk = (text: string, tags: string): string => cjkIndexText(tags === '' ? text : `${text} ${tags}`);
export const tripleCjk = (subject: string, predicate: string, object: string): string => cjkIndexText(`${subject} ${predicate} ${object}`);

const CJK_FILL_PAGE = 2000;

/** Fills the new cjk column of the rows that hold CJK, a page at a time (Latin rows keep ''). */
function fillCjk(db: Db, table: string, cols: readonly string[], cjk: (r: Record<string, string>) => string): void {
  for (let after = 0; ; ) {
    const rows = db.all<Record<string, string> & { seq: number }>(`SELECT seq, ${cols.join(', ')} FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ?`, [after, CJK_FILL_PAGE]);
    for (const r of rows) {
      const value = cjk(r);
      if (value !== '') db.run(`UPDATE ${table} SET cjk = ? WHERE seq = ?`, [value, r.seq]);
    }
    if (rows.length < CJK_FILL_PAGE) return;
    after = rows[rows.length - 1]!.seq;
  }
}

/**
 * Migration 6: each FTS5 table gains a last column holding the item's CJK units (a real column of the
 * item table, written by the repositories, '' without CJK). FTS5 cannot add a column, so the index is
 * dropped and rebuilt from the items (searchable episodes only), once.
 */
function addCjkColumn(db: Db): void {
  for (const t of ['memory_notes', 'memory_episodes', 'memory_triples']) {
    for (const sql of [`DROP TRIGGER ${t}_ai`, `DROP TRIGGER ${t}_ad`, `DROP TRIGGER ${t}_au`, `DROP TABLE ${t}_vocab`, `DROP TABLE ${t}_fts`]) db.run(sql);
    db.run(`ALTER TABLE ${t} ADD COLUMN cjk TEXT NOT NULL DEFAULT ''`);
  }
  fillCjk(db, 'memory_notes', ['text', 'tags'], (r) => noteCjk(r.text!, r.tags!));
  fillCjk(db, 'memory_episodes', ['summary'], (r) => cjkIndexText(r.summary!));
  fillCjk(db, 'memory_triples', ['subject', 'predicate', 'object'], (r) => tripleCjk(r.subject!, r.predicate!, r.object!));
  const statements = [
    `CREATE VIRTUAL TABLE memory_notes_fts USING fts5(text, tags, cjk, content='memory_notes', content_rowid='seq', ${TOKENIZE})`,
    ...ftsTriggers('memory_notes', 'memory_notes_fts', ['text', 'tags', 'cjk']),
    "CREATE VIRTUAL TABLE memory_notes_vocab USING fts5vocab(memory_notes_fts, 'row')",
    'INSERT INTO memory_notes_fts(rowid, text, tags, cjk) SELECT seq, text, tags, cjk FROM memory_notes',

    `CREATE VIRTUAL TABLE memory_episodes_fts USING fts5(summary, cjk, content='memory_episodes', content_rowid='seq', ${TOKENIZE})`,
    `CREATE TRIGGER memory_episodes_ai AFTER INSERT ON memory_episodes WHEN new.searchable = 1 BEGIN
      INSERT INTO memory_episodes_fts(rowid, summary, cjk) VALUES (new.seq, new.summary, new.cjk);
    END`,
    `CREATE TRIGGER memory_episodes_ad AFTER DELETE ON memory_episodes WHEN old.searchable = 1 BEGIN
      INSERT INTO memory_episodes_fts(memory_episodes_fts, rowid, summary, cjk) VALUES ('delete', old.seq, old.summary, old.cjk);
    END`,
    `CREATE TRIGGER memory_episodes_au AFTER UPDATE OF summary, cjk, searchable ON memory_episodes BEGIN
      INSERT INTO memory_episodes_fts(memory_episodes_fts, rowid, summary, cjk) SELECT 'delete', old.seq, old.summary, old.cjk WHERE old.searchable = 1;
      INSERT INTO memory_episodes_fts(rowid, summary, cjk) SELECT new.seq, new.summary, new.cjk WHERE new.searchable = 1;
    END`,
    "CREATE VIRTUAL TABLE memory_episodes_vocab USING fts5vocab(memory_episodes_fts, 'row')",
    'INSERT INTO memory_episodes_fts(rowid, summary, cjk) SELECT seq, summary, cjk FROM memory_episodes WHERE searchable = 1',

    `CREATE VIRTUAL TABLE memory_triples_fts USING fts5(subject, predicate, object, cjk, content='memory_triples', content_rowid='seq', ${TOKENIZE})`,
    ...ftsTriggers('memory_triples', 'memory_triples_fts', ['subject', 'predicate', 'object', 'cjk']),
    "CREATE VIRTUAL TABLE memory_triples_vocab USING fts5vocab(memory_triples_fts, 'row')",
    'INSERT INTO memory_triples_fts(rowid, subject, predicate, object, cjk) SELECT seq, subject, predicate, object, cjk FROM memory_triples',
  ];
  for (const sql of statements) db.run(sql);
}

export const MEMORY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'memory: notes, episodes, knowledge triples with FTS5; vectors; settings',
    up: `
    CREATE TABLE memory_notes (
      seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, text TEXT NOT NULL, source TEXT NOT NULL,
      tags TEXT NOT NULL DEFAULT '', created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
      recall_count INTEGER NOT NULL DEFAULT 0, recalled_at INTEGER);
    CREATE INDEX memory_notes_created ON memory_notes(created_at, seq);
    CREATE VIRTUAL TABLE memory_notes_fts USING fts5(text, tags, content='memory_notes', content_rowid='seq', ${TOKENIZE});
    ${ftsSync('memory_notes', 'memory_notes_fts', ['text', 'tags'])}
    CREATE VIRTUAL TABLE memory_notes_vocab USING fts5vocab(memory_notes_fts, 'row');

    CREATE TABLE memory_episodes (
      seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, session_id TEXT, summary TEXT NOT NULL,
      reason TEXT NOT NULL, summariser TEXT NOT NULL, message_count INTEGER NOT NULL,
      started_at INTEGER, ended_at INTEGER, created_at INTEGER NOT NULL,
      recall_count INTEGER NOT NULL DEFAULT 0, recalled_at INTEGER);
    CREATE INDEX memory_episodes_created ON memory_episodes(created_at, seq);
    CREATE VIRTUAL TABLE memory_episodes_fts USING fts5(summary, content='memory_episodes', content_rowid='seq', ${TOKENIZE});
    ${ftsSync('memory_episodes', 'memory_episodes_fts', ['summary'])}
    CREATE VIRTUAL TABLE memory_episodes_vocab USING fts5vocab(memory_episodes_fts, 'row');

    CREATE TABLE memory_triples (
      seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, subject TEXT NOT NULL, predicate TEXT NOT NULL,
      object TEXT NOT NULL, subject_key TEXT NOT NULL, predicate_key TEXT NOT NULL, object_key TEXT NOT NULL,
      confidence REAL NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
      recall_count INTEGER NOT NULL DEFAULT 0, recalled_at INTEGER);
    CREATE INDEX memory_triples_subject ON memory_triples(subject_key, predicate_key);
    CREATE INDEX memory_triples_object ON memory_triples(object_key);
    CREATE INDEX memory_triples_predicate ON memory_triples(predicate_key);
    CREATE TABLE memory_triple_sources (
      triple_id TEXT NOT NULL REFERENCES memory_triples(id) ON DELETE CASCADE, source TEXT NOT NULL,
      confidence REAL NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (triple_id, source));
    CREATE VIRTUAL TABLE memory_triples_fts USING fts5(subject, predicate, object, content='memory_triples', content_rowid='seq', ${TOKENIZE});
    ${ftsSync('memory_triples', 'memory_triples_fts', ['subject', 'predicate', 'object'])}
    CREATE VIRTUAL TABLE memory_triples_vocab USING fts5vocab(memory_triples_fts, 'row');

    CREATE TABLE memory_vectors (
      item_id TEXT PRIMARY KEY, model TEXT NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL);
    CREATE TABLE memory_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
  },
  {
    version: 2,
    description: 'memory: session snapshots and wiki pages',
    up: `
    CREATE TABLE memory_snapshots (
      id TEXT PRIMARY KEY, session_id TEXT NOT NULL, label TEXT, state TEXT NOT NULL,
      message_count INTEGER NOT NULL, working_count INTEGER NOT NULL, created_at INTEGER NOT NULL);
    CREATE INDEX memory_snapshots_session ON memory_snapshots(session_id, created_at);
    CREATE TABLE memory_wiki_pages (
      slug TEXT PRIMARY KEY, title TEXT NOT NULL, kind TEXT NOT NULL, statements TEXT NOT NULL,
      source_ids TEXT NOT NULL, built_at INTEGER NOT NULL, stale INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE memory_wiki_sources (
      item_id TEXT NOT NULL, slug TEXT NOT NULL REFERENCES memory_wiki_pages(slug) ON DELETE CASCADE,
      PRIMARY KEY (item_id, slug));
    CREATE INDEX memory_wiki_sources_slug ON memory_wiki_sources(slug);`,
  },
  {
    version: 3,
    description: 'memory: sign-bit codes of vectors (vector-index.ts keeps only these in RAM)',
    // The covering index lets start-up read every code (~12 MB at 170k items) without touching the
    // table's pages (~280 MB of vectors, slow to read from an SD card at every start).
    up: `ALTER TABLE memory_vectors ADD COLUMN code BLOB;
    CREATE INDEX memory_vectors_code ON memory_vectors(model, item_id, dim, code);`,
  },
  {
    version: 4,
    description: 'memory: a key per note text (remembering the same sentence twice keeps one note); fingerprints of forgotten notes',
    up: (db: Db) => {
      db.run('ALTER TABLE memory_notes ADD COLUMN text_key TEXT');
      for (const r of db.all<{ seq: number; text: string }>('SELECT seq, text FROM memory_notes')) db.run('UPDATE memory_notes SET text_key = ? WHERE seq = ?', [noteKey(r.text), r.seq]);
      db.run('CREATE INDEX memory_notes_text_key ON memory_notes(text_key)');
      // Hashed terms of each forgotten note with their weights (forgetting.ts): what later episodes
      // must not repeat. Hashes, not words: the table must not keep what the user asked to forget.
      db.run('CREATE TABLE memory_forgotten (id TEXT PRIMARY KEY, terms TEXT NOT NULL, created_at INTEGER NOT NULL)');
    },
  },
  {
    version: 5,
    description: 'memory: episodes of trivial sessions are kept but not searchable (not in FTS, not embedded)',
    // The FTS triggers index only searchable episodes; rows written before stay searchable.
    up: `ALTER TABLE memory_episodes ADD COLUMN searchable INTEGER NOT NULL DEFAULT 1;
    DROP TRIGGER memory_episodes_ai; DROP TRIGGER memory_episodes_ad; DROP TRIGGER memory_episodes_au;
    CREATE TRIGGER memory_episodes_ai AFTER INSERT ON memory_episodes WHEN new.searchable = 1 BEGIN
      INSERT INTO memory_episodes_fts(rowid, summary) VALUES (new.seq, new.summary);
    END;
    CREATE TRIGGER memory_episodes_ad AFTER DELETE ON memory_episodes WHEN old.searchable = 1 BEGIN
      INSERT INTO memory_episodes_fts(memory_episodes_fts, rowid, summary) VALUES ('delete', old.seq, old.summary);
    END;
    CREATE TRIGGER memory_episodes_au AFTER UPDATE OF summary, searchable ON memory_episodes BEGIN
      INSERT INTO memory_episodes_fts(memory_episodes_fts, rowid, summary) SELECT 'delete', old.seq, old.summary WHERE old.searchable = 1;
      INSERT INTO memory_episodes_fts(rowid, summary) SELECT new.seq, new.summary WHERE new.searchable = 1;
    END;`,
  },
  {
    version: 6,
    description: 'memory: CJK text searchable by character and word (a column of character and bigram units in each FTS5 index)',
    up: addCjkColumn,
  },
  {
    version: 7,
    description: 'memory: the revision counter of the memory journal (memory-journal.ts), bumped in the transaction of each change',
    up: `CREATE TABLE memory_revision (id INTEGER PRIMARY KEY CHECK (id = 1), revision INTEGER NOT NULL);
    INSERT INTO memory_revision (id, revision) VALUES (1, 0);`,
  },
];
