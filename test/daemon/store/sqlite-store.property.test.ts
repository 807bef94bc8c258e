// Property: whatever the mix of succeeding and failing writes, and however they fall into event-loop
// turns (and so into shared commits), the database ends up holding exactly the successful writes, in
// issue order, each promise settles the way its callback did, and a reopened file agrees.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import fc from 'fast-check';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { nextTurn, readCommitted, tempDir } from './temp-db';

interface Op {
  /** ok: commits; throw: fails in JS after inserting; constraint: fails in SQLite (duplicate key). */
  kind: 'ok' | 'throw' | 'constraint';
  /** Yield to the event loop after issuing this write, closing the current group commit. */
  yieldAfter: boolean;
}

const opArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom<Op['kind']>('ok', 'ok', 'throw', 'constraint'),
  yieldAfter: fc.boolean(),
});

const SCHEMA = [{ version: 1, description: 'items', up: 'CREATE TABLE items (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)' }];

type Outcome = { status: 'fulfilled'; value: string } | { status: 'rejected' };

/** Issues one write; the outcome handler is attached at once so no rejection is ever unhandled. */
function issue(store: SqliteStore, op: Op, index: number): Promise<Outcome> {
  const v = `w${index}`;
  return store
    .write((db) => {
      db.run('INSERT INTO items (v) VALUES (?)', [v]);
      if (op.kind === 'throw') throw new Error(`rejected ${v}`);
      if (op.kind === 'constraint') db.run('INSERT INTO items (v) VALUES (?)', [v]);
      return v;
    })
    .then(
      (value): Outcome => ({ status: 'fulfilled', value }),
      (): Outcome => ({ status: 'rejected' }),
    );
}

test('a random sequence of writes and failed writes leaves exactly the successful ones', async (t) => {
  const dir = tempDir(t);
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), fc.boolean(), async (ops, groupCommit) => {
      const file = join(dir, `run-${run++}.db`);
      const store = new SqliteStore(file, { groupCommit });
      store.migrate('test', SCHEMA);
      const pending: Promise<Outcome>[] = [];
      for (const [i, op] of ops.entries()) {
        pending.push(issue(store, op, i));
        if (op.yieldAfter) await nextTurn();
      }
      const settled = await Promise.all(pending);
      const expected = ops.flatMap((op, i) => (op.kind === 'ok' ? [`w${i}`] : []));
      assert.deepEqual(
        settled.map((s) => s.status),
        ops.map((op) => (op.kind === 'ok' ? 'fulfilled' : 'rejected')),
      );
      assert.deepEqual(
        settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])),
        expected,
      );
      assert.deepEqual(
        store.all<{ v: string }>('SELECT v FROM items ORDER BY id').map((r) => r.v),
        expected,
      );
      store.close();
      assert.deepEqual(
        readCommitted<{ v: string }>(file, 'SELECT v FROM items ORDER BY id').map((r) => r.v),
        expected,
      );
    }),
    { numRuns: 60 },
  );
});
