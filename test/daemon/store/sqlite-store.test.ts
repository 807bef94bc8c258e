// SqliteStore on real database files: group commit (one commit per event-loop turn, observed through
// the file change counter in the SQLite header), per-write rollback, acknowledgement only after COMMIT,
// and close() flushing what is pending. docs/storage.md explains the design these tests pin down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { commitCounter, readCommitted, tempDir } from './temp-db';

const SCHEMA = [{ version: 1, description: 'items', up: 'CREATE TABLE items (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)' }];

function openStore(dir: string, options: ConstructorParameters<typeof SqliteStore>[1] = {}): SqliteStore {
  const store = new SqliteStore(join(dir, 'brain.db'), options);
  store.migrate('test', SCHEMA);
  return store;
}

const insert = (store: SqliteStore, v: string): Promise<number> =>
  store.write((db) => Number(db.run('INSERT INTO items (v) VALUES (?)', [v]).lastInsertRowid));

const values = (rows: { v: string }[]): string[] => rows.map((r) => r.v);

test('many writes issued in one event-loop turn share exactly one commit', async (t) => {
  const dir = tempDir(t);
  const store = openStore(dir);
  t.after(() => store.close());
  const before = commitCounter(store.path);
  const ids = await Promise.all(Array.from({ length: 50 }, (_, i) => insert(store, `v${i}`)));
  assert.equal(commitCounter(store.path), before + 1);
  assert.deepEqual(ids, Array.from({ length: 50 }, (_, i) => i + 1));
  assert.equal(readCommitted(store.path, 'SELECT v FROM items').length, 50);
});

test('writes in separate turns commit separately; without group commit every write commits alone', async (t) => {
  const dir = tempDir(t);
  const grouped = openStore(dir);
  const start = commitCounter(grouped.path);
  for (const v of ['a', 'b', 'c']) await insert(grouped, v);
  assert.equal(commitCounter(grouped.path), start + 3);
  grouped.close();

  const single = openStore(dir, { groupCommit: false });
  t.after(() => single.close());
  const before = commitCounter(single.path);
  await Promise.all(['d', 'e', 'f', 'g'].map((v) => insert(single, v)));
  assert.equal(commitCounter(single.path), before + 4);
  assert.deepEqual(values(single.all('SELECT v FROM items ORDER BY id')), ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
});

test('a throwing write rolls back only itself; its neighbours in the same commit survive', async (t) => {
  const dir = tempDir(t);
  const store = openStore(dir);
  t.after(() => store.close());
  const before = commitCounter(store.path);
  const first = insert(store, 'first');
  const failing = store.write((db) => {
    db.run('INSERT INTO items (v) VALUES (?)', ['doomed']);
    db.run('UPDATE items SET v = ? WHERE v = ?', ['renamed', 'first']);
    throw new Error('validation failed after two statements');
  });
  const duplicate = insert(store, 'first'); // UNIQUE violation raised by SQLite itself
  const last = insert(store, 'last');
  const results = await Promise.allSettled([first, failing, duplicate, last]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
  );
  assert.match(String((results[1] as PromiseRejectedResult).reason), /validation failed after two statements/);
  assert.match(String((results[2] as PromiseRejectedResult).reason), /UNIQUE constraint failed/);
  assert.equal(commitCounter(store.path), before + 1);
  assert.deepEqual(values(readCommitted(store.path, 'SELECT v FROM items ORDER BY id')), ['first', 'last']);
});

test('the promise resolves only after COMMIT: before that no other connection can see (or even read) the data', async (t) => {
  const dir = tempDir(t);
  const store = openStore(dir);
  t.after(() => store.close());
  const pending = insert(store, 'x');
  // The transaction is open until the next turn: node-sqlite3-wasm holds its `.lock` directory and a
  // second connection is refused rather than shown uncommitted rows.
  assert.ok(existsSync(`${store.path}.lock`));
  assert.throws(() => readCommitted(store.path, 'SELECT v FROM items'), /locked/);
  let settledEarly = false;
  void pending.then(() => (settledEarly = true));
  await Promise.resolve();
  assert.equal(settledEarly, false);

  const seenAtResolution = await pending.then(() => ({
    rows: values(readCommitted(store.path, 'SELECT v FROM items')),
    journal: existsSync(`${store.path}-journal`),
    lock: existsSync(`${store.path}.lock`),
  }));
  assert.deepEqual(seenAtResolution, { rows: ['x'], journal: false, lock: false });
});

test('a write issued from an acknowledgement callback starts a new commit', async (t) => {
  const dir = tempDir(t);
  const store = openStore(dir);
  t.after(() => store.close());
  const before = commitCounter(store.path);
  await insert(store, 'one').then(() => insert(store, 'two'));
  assert.equal(commitCounter(store.path), before + 2);
});

test('a failing COMMIT rejects every write of its batch, leaves nothing, and the store keeps working', async (t) => {
  const dir = tempDir(t);
  const store = openStore(dir);
  t.after(() => store.close());
  // A deferred foreign key is only checked at COMMIT, so one bad write fails the whole batch; that is
  // why repositories must not declare DEFERRABLE constraints (docs/storage.md).
  store.migrate('fk', [
    {
      version: 1,
      description: 'deferred fk',
      up: 'CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)',
    },
  ]);
  const innocent = insert(store, 'innocent');
  const orphan = store.write((db) => db.run('INSERT INTO child (parent) VALUES (42)'));
  const results = await Promise.allSettled([innocent, orphan]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  assert.match(String((results[0] as PromiseRejectedResult).reason), /FOREIGN KEY/);
  assert.deepEqual(readCommitted(store.path, 'SELECT v FROM items'), []);
  await insert(store, 'after');
  assert.deepEqual(values(readCommitted(store.path, 'SELECT v FROM items')), ['after']);
});

test('close() commits pending writes, resolves them, and is idempotent', async (t) => {
  const dir = tempDir(t);
  const store = openStore(dir);
  const pending = Promise.all([insert(store, 'a'), insert(store, 'b')]);
  store.close();
  store.close();
  assert.deepEqual(await pending, [1, 2]);
  assert.ok(!existsSync(`${store.path}.lock`), 'close releases the database lock');
  const reopened = openStore(dir);
  t.after(() => reopened.close());
  assert.deepEqual(values(reopened.all('SELECT v FROM items ORDER BY id')), ['a', 'b']);
});

test('reads see the store’s own uncommitted writes of the current turn (one connection)', async (t) => {
  const dir = tempDir(t);
  const store = openStore(dir);
  t.after(() => store.close());
  const pending = insert(store, 'mine');
  assert.deepEqual(store.get<{ v: string }>('SELECT v FROM items WHERE id = ?', [1]), { v: 'mine' });
  await pending;
  assert.equal(store.get('SELECT v FROM items WHERE id = ?', [99]), undefined);
  assert.deepEqual(store.all('SELECT v FROM items WHERE v = :v', { ':v': 'mine' }), [{ v: 'mine' }]);
});

test('a statement that failed does not poison the next use of the same SQL', async (t) => {
  const dir = tempDir(t);
  const store = openStore(dir);
  t.after(() => store.close());
  await insert(store, 'a');
  await assert.rejects(insert(store, 'a'), /UNIQUE constraint failed/);
  assert.equal(await insert(store, 'b'), 2);
  assert.throws(() => store.get('SELECT nope FROM items'), /no such column/);
  assert.throws(() => store.run('INSERT INTO items (v) VALUES (?)', ['a']), /UNIQUE/);
  assert.deepEqual(store.get('SELECT COUNT(*) AS n FROM items'), { n: 2 });
});

test('the statement cache stays bounded under endlessly varied SQL, and evicted statements work again', (t) => {
  const dir = tempDir(t);
  const store = openStore(dir);
  t.after(() => store.close());
  const statements = (): Map<string, unknown> => (store as unknown as { statements: Map<string, unknown> }).statements;
  const cached = (): number => statements().size;
  const frequent = 'SELECT COUNT(*) AS n FROM items';
  for (let i = 0; i < 1000; i++) {
    assert.deepEqual(store.get(`SELECT ${i} AS n`), { n: i });
    if (i % 50 === 0) assert.deepEqual(store.get(frequent), { n: 0 }); // used now and then: stays cached
  }
  assert.ok(cached() <= 200, `${cached()} cached statements`);
  assert.ok(statements().has(frequent), 'least recently used goes first, not first prepared');
  assert.deepEqual(store.get('SELECT 0 AS n'), { n: 0 }); // evicted long ago: prepared again
  assert.deepEqual(store.all('SELECT 999 AS n UNION ALL SELECT 998'), [{ n: 999 }, { n: 998 }]);
});

test('an idle store holds no database lock, even after get() read one row of many', async (t) => {
  const dir = tempDir(t);
  const store = openStore(dir);
  t.after(() => store.close());
  await Promise.all(['a', 'b', 'c'].map((v) => insert(store, v)));
  assert.deepEqual(store.get('SELECT v FROM items ORDER BY id'), { v: 'a' });
  // node-sqlite3-wasm locks with a `<db>.lock` directory; an active statement would keep it, shutting
  // out every other connection and leaving it behind on kill -9 even when no write was in flight.
  assert.ok(!existsSync(`${store.path}.lock`));
  assert.deepEqual(values(readCommitted(store.path, 'SELECT v FROM items ORDER BY id')), ['a', 'b', 'c']);
});

test('opens with journal_mode=delete and the configured synchronous level', (t) => {
  const dir = tempDir(t);
  const full = new SqliteStore(join(dir, 'full.db'));
  const normal = new SqliteStore(join(dir, 'normal.db'), { synchronous: 'NORMAL' });
  t.after(() => {
    full.close();
    normal.close();
  });
  assert.deepEqual(full.get('PRAGMA journal_mode'), { journal_mode: 'delete' });
  assert.deepEqual(full.get('PRAGMA synchronous'), { synchronous: 2 });
  assert.deepEqual(normal.get('PRAGMA synchronous'), { synchronous: 1 });
  assert.deepEqual(full.get('PRAGMA foreign_keys'), { foreign_keys: 1 });
});

test('text with U+0000 is refused, never stored cut short; the write rolls back and the store goes on', async (t) => {
  const dir = tempDir(t);
  const store = openStore(dir);
  t.after(() => store.close());
  await assert.rejects(insert(store, 'secret\u0000tail'), { name: 'NulInTextError' });
  await assert.rejects(store.write((db) => db.run('INSERT INTO items (v) VALUES (:v)', { v: 'a\u0000' })), { name: 'NulInTextError' });
  assert.deepEqual(values(store.all<{ v: string }>('SELECT v FROM items')), []);
  await insert(store, 'fine');
  assert.deepEqual(values(store.all<{ v: string }>('SELECT v FROM items')), ['fine']);
});
