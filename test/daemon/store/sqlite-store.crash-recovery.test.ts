// kill -9 in the middle of a write transaction, on real files (ARCHITECTURE.md, Storage). Verifies the
// facts docs/storage.md relies on: node-sqlite3-wasm leaves its `<db>.lock` directory and a hot
// journal behind; until the directory is removed every open fails with "database is locked"; the
// instance lock lets the next brain remove it; SQLite then rolls the hot journal back, keeping every
// committed row and none of the uncommitted ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import { InstanceLock } from '../../../daemon/store/instance-lock';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { CHILD_ARGS, CHILD_ROLE, report, spawnSelf } from './child-process';
import { tempDir } from './temp-db';

const SCHEMA = [{ version: 1, description: 'items', up: 'CREATE TABLE items (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)' }];
const COMMITTED = 10;

/**
 * Child role: a brain-like process that commits COMMITTED rows, then opens a transaction large enough
 * (6 MB, three times SQLite's default 2 MB page cache) that dirty pages spill into the database file
 * before COMMIT, reports, and blocks the event loop so the group commit never runs.
 */
async function crashMidWrite(home: string): Promise<void> {
  const lock = new InstanceLock(home);
  lock.acquire();
  const store = new SqliteStore(join(home, 'brain.db'));
  store.migrate('test', SCHEMA);
  for (let i = 0; i < COMMITTED; i++) await store.write((db) => db.run('INSERT INTO items (payload) VALUES (?)', [new Uint8Array(100)]));
  const committedSize = statSync(store.path).size;
  void store.write((db) => {
    for (let i = 0; i < 3000; i++) db.run('INSERT INTO items (payload) VALUES (?)', [new Uint8Array(2048).fill(i % 251)]);
  });
  report({ inTransaction: true, committedSize });
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}

if (CHILD_ROLE === 'crash-mid-write') {
  await crashMidWrite(CHILD_ARGS[0]!);
} else {
  test('after kill -9 mid-write: .lock dir and hot journal remain, open is refused, recovery keeps exactly the committed rows', async (t) => {
    const home = tempDir(t);
    const db = join(home, 'brain.db');
    const child = spawnSelf(import.meta.filename, 'crash-mid-write', [home]);
    t.after(() => child.kill());
    const { committedSize } = await child.next<{ committedSize: number }>();
    await child.kill('SIGKILL');

    assert.ok(statSync(`${db}.lock`).isDirectory(), 'node-sqlite3-wasm leaves its lock directory');
    assert.ok(existsSync(`${db}-journal`), 'a hot journal is left');
    assert.ok(statSync(db).size > committedSize, 'uncommitted pages reached the database file');
    assert.ok(existsSync(join(home, 'brain.pid')), 'the instance lock is left too');

    const blocked = new sqlite.Database(db);
    assert.throws(() => blocked.all('SELECT COUNT(*) FROM items'), /database is locked/);
    blocked.close();

    const lock = new InstanceLock(home);
    t.after(() => lock.release());
    assert.equal(lock.acquire(), true, 'the dead brain’s pid file is taken over');
    assert.deepEqual(lock.clearStaleDatabaseLocks(), ['brain.db.lock']);

    const store = new SqliteStore(db);
    t.after(() => store.close());
    assert.deepEqual(store.get('SELECT COUNT(*) AS n FROM items'), { n: COMMITTED });
    assert.deepEqual(store.get('PRAGMA integrity_check'), { integrity_check: 'ok' });
    assert.ok(!existsSync(`${db}-journal`), 'the hot journal was rolled back and removed');
    store.migrate('test', SCHEMA);
    assert.equal(await store.write((d) => Number(d.run('INSERT INTO items (payload) VALUES (?)', [new Uint8Array(1)]).lastInsertRowid)), COMMITTED + 1);
  });
}
