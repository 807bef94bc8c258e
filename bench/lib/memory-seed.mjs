// Writes notes, episodes and knowledge triples straight into the store of a stopped brain, with the
// brain's own SqliteStore and the rows its memory writes (daemon/memory/note-repository.ts,
// episode-repository.ts, knowledge-graph.ts: the same columns, the note's text key, the triple's
// content-derived id and one source row each; Latin text, so the CJK column is ''). Loading 100k notes
// through the HTTP API would take minutes and measure the API. Rows written this way have no sync op:
// the brain's sync capability gives them one at its next start (daemon/sync/backfill.ts), which is
// itself a number worth measuring. Each tier goes in one transaction, timed: the native insert rate of
// the same rows, a baseline for what the sync later does with them.
import { build } from 'esbuild';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ENTRY = `
export { SqliteStore } from './daemon/store/sqlite-store';
export { noteKey } from './daemon/memory/note-key';
export { entityKey, tripleId } from './sync/triple-id';
`;

/** The brain's store and the two formulas the rows need, bundled from the source into `dir`. */
export async function loadMemoryParts(root, dir) {
  const outfile = join(dir, 'memory-parts.mjs');
  await build({ stdin: { contents: ENTRY, resolveDir: root, loader: 'ts' }, outfile, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'warning' });
  return import(pathToFileURL(outfile).href);
}

/** A memory id as daemon/memory/ids.ts makes one: tier prefix, base-36 time, 10 hex digits. */
const memoryId = (prefix, ms) => `${prefix}_${ms.toString(36).padStart(9, '0')}${randomBytes(5).toString('hex')}`;

const WORDS = ['boiler', 'cellar', 'garden', 'kitchen', 'plumber', 'window', 'garage', 'battery', 'heating', 'attic', 'lamp', 'fridge', 'router', 'roof', 'hedge', 'meter'];
const word = (i, k) => WORDS[(i * 7 + k * 3) % WORDS.length];

export const noteText = (tag, i) => `${tag} note ${i}: the ${word(i, 1)} by the ${word(i, 2)} was checked on day ${i % 365}; ask about the ${word(i, 3)} and the ${word(i, 4)} next time`;
const episodeSummary = (i) =>
  `Session ${i}: the user asked about the ${word(i, 1)} and the ${word(i, 2)}, set a reminder for the ${word(i, 3)} on day ${i % 365}, and agreed to look at the ${word(i, 4)} again after the ${word(i, 5)} was fixed. Nothing else was decided.`;

/** Inserts `rows` with `insert(db, i, now)` in one transaction; resolves with the milliseconds it took. */
async function timedInsert(store, rows, insert) {
  const now = Date.now();
  const t0 = performance.now();
  await store.write((db) => {
    for (let i = 0; i < rows; i++) insert(db, i, now);
  });
  return performance.now() - t0;
}

/**
 * Writes `notes`, `episodes` and `triples` rows into the stopped brain's `file` (brain.db). Resolves
 * with the milliseconds each tier's transaction took and the rows per second over all of them.
 */
export async function seedMemory(parts, file, { notes, episodes, triples }) {
  const { SqliteStore, noteKey, entityKey, tripleId } = parts;
  const store = new SqliteStore(file);
  try {
    const noteMs = await timedInsert(store, notes, (db, i, now) => {
      const at = now - (notes - i) * 1000;
      const text = noteText('seeded', i);
      db.run('INSERT INTO memory_notes (id, text, source, tags, created_at, updated_at, text_key, cjk) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [memoryId('note', at), text, 'user', i % 4 === 0 ? '["home"]' : '', at, at, noteKey(text), '']);
    });
    const episodeMs = await timedInsert(store, episodes, (db, i, now) => {
      const at = now - (episodes - i) * 60_000;
      db.run(
        'INSERT INTO memory_episodes (id, session_id, summary, reason, summariser, message_count, started_at, ended_at, created_at, searchable, cjk) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [memoryId('ep', at), `ses_seed${i}`, episodeSummary(i), 'session_end', 'local', 12, at - 600_000, at - 1000, at, 1, ''],
      );
    });
    const tripleMs = await timedInsert(store, triples, (db, i, now) => {
      const [subject, predicate, object] = [`${word(i, 1)} ${i}`, 'is in', `the ${word(i, 2)}`];
      const id = tripleId(subject, predicate, object);
      db.run(
        'INSERT INTO memory_triples (id, subject, predicate, object, subject_key, predicate_key, object_key, confidence, created_at, updated_at, cjk) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [id, subject, predicate, object, entityKey(subject), entityKey(predicate), entityKey(object), 0.8, now, now, ''],
      );
      db.run('INSERT INTO memory_triple_sources (triple_id, source, confidence, at) VALUES (?, ?, ?, ?)', [id, 'user', 0.8, now]);
    });
    const total = noteMs + episodeMs + tripleMs;
    return { notes_ms: Math.round(noteMs), episodes_ms: Math.round(episodeMs), triples_ms: Math.round(tripleMs), rows_per_s: Math.round(((notes + episodes + triples) * 1000) / total) };
  } finally {
    store.close();
  }
}
