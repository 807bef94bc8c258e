// Hot-journal rollback on journals written by the real library: a child process commits rows, then
// starts an UPDATE of all of them with a tiny page cache (so original pages are journaled and modified
// pages spill into the database file) and is killed with SIGKILL mid-transaction. The database as it
// was before that transaction is copied first, so recovery can be checked byte for byte. (Checked
// separately against native SQLite's own recovery on 80+ random crash points: identical files.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, closeSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import { JournalError, pageChecksum, rollbackHotJournal } from '../../../daemon/store/hot-journal';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { CHILD_ARGS, CHILD_ROLE, parentLines, report, spawnSelf } from './child-process';
import { tempDir } from './temp-db';

const ROWS = 3000;

async function interruptedUpdate(file: string): Promise<void> {
  const store = new SqliteStore(file);
  store.migrate('test', [{ version: 1, description: 'items', up: 'CREATE TABLE items (id INTEGER PRIMARY KEY, v INTEGER NOT NULL, payload BLOB NOT NULL)' }]);
  await store.write((db) => {
    for (let i = 0; i < ROWS; i++) db.run('INSERT INTO items (v, payload) VALUES (0, ?)', [new Uint8Array(1000).fill(i % 256)]);
  });
  const input = parentLines();
  report({ committed: true });
  await input.next();
  store.exec('PRAGMA cache_size=10');
  void store.write((db) => db.run('UPDATE items SET v = 1, payload = zeroblob(900)'));
  report({ interrupted: true });
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}

if (CHILD_ROLE === 'interrupted-update') {
  await interruptedUpdate(CHILD_ARGS[0]!);
} else {
  describe('rollbackHotJournal', () => {
    const crash = { dir: '', pristine: Buffer.alloc(0) };

    before(async () => {
      crash.dir = mkdtempSync(join(tmpdir(), 'svc-journal-'));
      const child = spawnSelf(import.meta.filename, 'interrupted-update', [join(crash.dir, 'brain.db')]);
      await child.next();
      crash.pristine = readFileSync(join(crash.dir, 'brain.db'));
      child.send('go');
      await child.next();
      await child.kill('SIGKILL');
      rmSync(join(crash.dir, 'brain.db.lock'), { recursive: true }); // what the instance lock's holder does
    });
    after(() => rmSync(crash.dir, { recursive: true, force: true }));

    /** A private copy of the crashed state for one test. */
    const crashed = (t: Parameters<typeof tempDir>[0]): string => {
      const dir = tempDir(t);
      cpSync(crash.dir, dir, { recursive: true });
      return join(dir, 'brain.db');
    };

    test('node-sqlite3-wasm on its own reads the interrupted transaction as if committed (why this module exists)', (t) => {
      const db = new sqlite.Database(crashed(t));
      const seen = db.get('SELECT COUNT(*) AS n FROM items WHERE v = 1') as { n: number };
      db.close();
      assert.ok(seen.n > 0, 'if this fails, node-sqlite3-wasm now rolls hot journals back itself; hot-journal.ts can be reconsidered');
    });

    test('restores the database file byte for byte and deletes the journal', (t) => {
      const file = crashed(t);
      assert.notDeepEqual(readFileSync(file), crash.pristine, 'the crash left modified pages in the file');
      const result = rollbackHotJournal(file);
      assert.equal(result.state, 'rolled-back');
      assert.ok(result.state === 'rolled-back' && result.pages > 0);
      assert.deepEqual(readFileSync(file), crash.pristine);
      assert.ok(!existsSync(`${file}-journal`));
      assert.ok(!existsSync(`${file}.lock`));
    });

    test('SqliteStore rolls back on open: every committed row, nothing of the interrupted UPDATE', (t) => {
      const store = new SqliteStore(crashed(t));
      t.after(() => store.close());
      assert.equal(store.recovery.state, 'rolled-back');
      assert.deepEqual(store.all('SELECT v, COUNT(*) AS n FROM items GROUP BY v'), [{ v: 0, n: ROWS }]);
      assert.deepEqual(store.get('PRAGMA integrity_check'), { integrity_check: 'ok' });
    });

    test('a journal whose first record fails its checksum restores nothing but the original size', (t) => {
      const file = crashed(t);
      const journal = `${file}-journal`;
      const bytes = readFileSync(journal);
      const sector = bytes.readUInt32BE(20);
      const pageSize = bytes.readUInt32BE(24);
      const page = bytes.subarray(sector + 4, sector + 4 + pageSize);
      assert.equal(pageChecksum(bytes.readUInt32BE(12), page), bytes.readUInt32BE(sector + 4 + pageSize), 'checksum formula matches SQLite');
      page[pageSize - 200] = page[pageSize - 200]! ^ 0xff;
      writeFileSync(journal, bytes);
      const before = readFileSync(file);
      const result = rollbackHotJournal(file);
      assert.deepEqual(result, { state: 'rolled-back', pages: 0, originalPages: crash.pristine.length / pageSize });
      assert.deepEqual(readFileSync(file), before.subarray(0, crash.pristine.length));
      assert.ok(!existsSync(journal));
    });

    test('a journal never synced (header magic still zero) is discarded and the file left alone', (t) => {
      const file = crashed(t);
      const journal = `${file}-journal`;
      const bytes = readFileSync(journal);
      bytes.fill(0, 0, 8);
      writeFileSync(journal, bytes);
      const before = readFileSync(file);
      assert.equal(rollbackHotJournal(file).state, 'discarded');
      assert.deepEqual(readFileSync(file), before);
      assert.ok(!existsSync(journal));
    });

    test('no journal, or a database held by another connection: nothing is touched', (t) => {
      const file = crashed(t);
      const clean = join(tempDir(t), 'clean.db');
      writeFileSync(clean, 'x');
      assert.deepEqual(rollbackHotJournal(clean), { state: 'none' });
      mkdirSync(`${file}.lock`);
      assert.deepEqual(rollbackHotJournal(file), { state: 'locked' });
      assert.ok(existsSync(`${file}-journal`));
    });

    test('a journal next to an empty database is discarded, as SQLite does', (t) => {
      const file = crashed(t);
      writeFileSync(file, '');
      assert.equal(rollbackHotJournal(file).state, 'discarded');
      assert.ok(!existsSync(`${file}-journal`));
    });

    test('a journal naming a super-journal is refused, not guessed at', (t) => {
      const file = crashed(t);
      const journal = `${file}-journal`;
      const name = Buffer.from('/tmp/x-mj01');
      const tail = Buffer.alloc(4 + name.length + 16);
      name.copy(tail, 4);
      tail.writeUInt32BE(name.length, 4 + name.length);
      Buffer.from('d9d505f920a163d7', 'hex').copy(tail, tail.length - 8);
      appendFileSync(journal, tail);
      assert.throws(() => rollbackHotJournal(file), JournalError);
      assert.ok(existsSync(journal), 'left for a human');
      assert.ok(!existsSync(`${file}.lock`), 'the lock is released on error');
    });

    test('the first 28 bytes of the journal are the documented header', (t) => {
      const journal = `${crashed(t)}-journal`;
      const fd = openSync(journal, 'r');
      const header = Buffer.alloc(28);
      readSync(fd, header, 0, 28, 0);
      closeSync(fd);
      assert.equal(header.subarray(0, 8).toString('hex'), 'd9d505f920a163d7');
      assert.ok(header.readUInt32BE(8) > 0, 'nRec was synced before pages reached the database');
      assert.equal(header.readUInt32BE(16) * header.readUInt32BE(24), crash.pristine.length, 'original size in pages');
    });
  });
}
