// Per-component numbered migrations (docs/storage.md): applied in version order, one transaction each,
// recorded in schema_migrations; gaps and duplicates refused before anything runs; a re-run (also after
// reopening) does nothing; a database written by a newer svc is refused instead of being downgraded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { MigrationError, SqliteStore } from '../../../daemon/store/sqlite-store';
import type { Migration } from '../../../daemon/store/store';
import { tempDir } from './temp-db';

const log = (table: string, entry: string): string => `INSERT INTO ${table} (entry) VALUES ('${entry}')`;

const NOTES: Migration[] = [
  { version: 1, description: 'notes table', up: `CREATE TABLE notes_log (entry TEXT); ${log('notes_log', 'v1')}` },
  { version: 2, description: 'notes title', up: (db) => void db.run(log('notes_log', 'v2')) },
  { version: 3, description: 'notes index', up: `CREATE INDEX notes_entry ON notes_log (entry); ${log('notes_log', 'v3')}` },
];

function open(dir: string): SqliteStore {
  return new SqliteStore(join(dir, 'brain.db'));
}

const applied = (store: SqliteStore, component: string): { version: number; description: string }[] =>
  store.all('SELECT version, description FROM schema_migrations WHERE component = ? ORDER BY version', [component]);

test('migrations run in version order whatever the array order, each recorded once', (t) => {
  const store = open(tempDir(t));
  t.after(() => store.close());
  store.migrate('notes', [NOTES[2]!, NOTES[0]!, NOTES[1]!]);
  assert.deepEqual(store.all('SELECT entry FROM notes_log ORDER BY rowid'), [{ entry: 'v1' }, { entry: 'v2' }, { entry: 'v3' }]);
  assert.deepEqual(applied(store, 'notes'), [
    { version: 1, description: 'notes table' },
    { version: 2, description: 'notes title' },
    { version: 3, description: 'notes index' },
  ]);
});

test('a re-run, in the same process or after reopening, applies nothing', (t) => {
  const dir = tempDir(t);
  const first = open(dir);
  first.migrate('notes', NOTES);
  first.migrate('notes', NOTES);
  first.close();
  const second = open(dir);
  t.after(() => second.close());
  second.migrate('notes', NOTES);
  assert.deepEqual(second.get('SELECT COUNT(*) AS n FROM notes_log'), { n: 3 });
  assert.equal(applied(second, 'notes').length, 3);
});

test('only the new migrations run when a later svc adds some', (t) => {
  const dir = tempDir(t);
  const old = open(dir);
  old.migrate('notes', NOTES.slice(0, 1));
  old.close();
  const upgraded = open(dir);
  t.after(() => upgraded.close());
  upgraded.migrate('notes', NOTES);
  assert.deepEqual(upgraded.all('SELECT entry FROM notes_log ORDER BY rowid'), [{ entry: 'v1' }, { entry: 'v2' }, { entry: 'v3' }]);
});

test('a gap, a duplicate or a numbering that does not start at 1 is refused before anything runs', (t) => {
  const store = open(tempDir(t));
  t.after(() => store.close());
  const cases: Migration[][] = [
    [NOTES[0]!, NOTES[2]!],
    [NOTES[0]!, { ...NOTES[1]!, version: 1 }],
    [{ ...NOTES[0]!, version: 2 }],
    [{ ...NOTES[0]!, version: 0 }],
  ];
  for (const migrations of cases) {
    assert.throws(() => store.migrate('notes', migrations), (err: unknown) => err instanceof MigrationError && /without gaps/.test(err.message));
  }
  assert.equal(store.get("SELECT name FROM sqlite_master WHERE name = 'notes_log'"), undefined);
  assert.deepEqual(applied(store, 'notes'), []);
});

test('a database at a newer schema version than this svc knows is refused, untouched', (t) => {
  const dir = tempDir(t);
  const newer = open(dir);
  newer.migrate('notes', NOTES);
  newer.close();
  const older = open(dir);
  t.after(() => older.close());
  assert.throws(
    () => older.migrate('notes', NOTES.slice(0, 2)),
    (err: unknown) => err instanceof MigrationError && /schema version 3, newer than this svc knows \(2\)/.test(err.message),
  );
  assert.equal(applied(older, 'notes').length, 3);
});

test('a failing migration rolls back itself only: earlier ones stay, the failing one can be retried', (t) => {
  const store = open(tempDir(t));
  t.after(() => store.close());
  const broken: Migration = { version: 2, description: 'broken', up: `CREATE TABLE half_done (x); INSERT INTO missing_table VALUES (1)` };
  assert.throws(() => store.migrate('notes', [NOTES[0]!, broken]), /no such table: missing_table/);
  assert.deepEqual(applied(store, 'notes'), [{ version: 1, description: 'notes table' }]);
  assert.equal(store.get("SELECT name FROM sqlite_master WHERE name = 'half_done'"), undefined, 'DDL of the failed migration is rolled back');
  store.migrate('notes', NOTES);
  assert.equal(applied(store, 'notes').length, 3);
});

test('components are numbered independently', (t) => {
  const store = open(tempDir(t));
  t.after(() => store.close());
  store.migrate('notes', NOTES);
  store.migrate('approvals', [{ version: 1, description: 'approvals table', up: 'CREATE TABLE approvals_log (entry TEXT)' }]);
  assert.equal(applied(store, 'notes').length, 3);
  assert.deepEqual(applied(store, 'approvals'), [{ version: 1, description: 'approvals table' }]);
});

test('migrate commits a group-commit batch that is still open, and its writes are acknowledged', async (t) => {
  const store = open(tempDir(t));
  t.after(() => store.close());
  store.migrate('notes', NOTES.slice(0, 1));
  const pending = store.write((db) => db.run(log('notes_log', 'written')));
  store.migrate('notes', NOTES);
  await pending;
  assert.deepEqual(store.all('SELECT entry FROM notes_log ORDER BY rowid'), [{ entry: 'v1' }, { entry: 'written' }, { entry: 'v2' }, { entry: 'v3' }]);
});
