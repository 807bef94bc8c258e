// Backfill of records from before sync: a brain whose notes, episodes and facts were written with no
// journal gets a put op for each (one per source of a fact) in bounded transactions; a second run
// appends nothing, a run cut short is finished by the next, a deleted record is not announced again,
// a record a peer would refuse is skipped; and what was backfilled reaches another brain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatMessage } from '../../../daemon/kernel/conversation';
import type { Db, Store } from '../../../daemon/store/store';
import { backfillOps } from '../../../daemon/sync/backfill';
import { mergeOp, readCursor } from '../../../daemon/sync/op-log';
import { stampOp } from '../../../sync/ops';
import { memoryFixture } from '../memory/memory-fixture';
import { BRAINS } from '../../sync/sync-fixtures';
import { closeAll, exchange, opsOf, syncBrain, syncedTables, type SyncBrain } from './sync-brain';

const [A, B] = [BRAINS[0], BRAINS[1]];
const chat = (...turns: string[]): ChatMessage[] => turns.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content }));
const count = (db: Db, sql: string): number => db.get<{ n: number }>(sql)!.n;

/** A brain that wrote memory before it had an op log, reopened with sync attached (nothing backfilled yet). */
async function brainFromBeforeSync(id: string, write: (m: ReturnType<typeof memoryFixture>) => Promise<void>): Promise<SyncBrain> {
  const before = memoryFixture();
  await write(before);
  await before.close({ keep: true });
  return syncBrain(id, { dir: before.dir });
}

async function someMemory(m: ReturnType<typeof memoryFixture>, notes = 7): Promise<void> {
  for (let i = 0; i < notes; i++) await m.memory.remember(`Shopping list item number ${i} is oat milk`, { tags: ['home'] });
  await m.memory.recordEpisode({ sessionId: 's1', reason: 'session_end', messages: chat('Remember the boiler is booked for March.', "I'll remember that.", 'And the bike lock code?', 'It is 7391.') });
  await m.memory.addTriples([{ subject: 'Anna', predicate: 'likes', object: 'green tea', confidence: 0.6 }], 'turn:a');
  await m.memory.addTriples([{ subject: 'Anna', predicate: 'likes', object: 'green tea', confidence: 0.5 }], 'turn:b');
  await m.memory.addTriples([{ subject: 'Anna', predicate: 'lives in', object: 'Graz', confidence: 0.9 }], 'turn:a');
}

/** Counts the store's write transactions. */
function countingWrites(store: Store): { store: Store; writes: () => number } {
  let n = 0;
  const counted: Store = Object.create(store) as Store;
  counted.write = (fn) => {
    n++;
    return store.write(fn);
  };
  return { store: counted, writes: () => n };
}

test('every record without op-log state gets a put stamped now, in bounded transactions; a second run appends nothing', async (t) => {
  const a = await brainFromBeforeSync(A, (m) => someMemory(m));
  t.after(() => closeAll(a));
  const db = a.mem.store;
  assert.equal(count(db, 'SELECT COUNT(*) AS n FROM sync_ops'), 0, 'nothing was journaled before sync');
  const episodes = count(db, 'SELECT COUNT(*) AS n FROM memory_episodes');
  assert.ok(episodes >= 1);

  const { store, writes } = countingWrites(db);
  const done = await backfillOps(store, a.log, { batch: 3 });
  assert.deepEqual(done, { notes: 7, episodes, triples: 2, skipped: 0 });
  // notes: 3 + 3 + 1; episodes: 1; triples: 1 — one transaction per batch, none holds more than 3 records.
  assert.equal(writes(), Math.ceil(7 / 3) + Math.ceil(episodes / 3) + 1);

  const ops = opsOf(a);
  assert.equal(ops.length, 7 + episodes + 3, 'a fact asserted by two sources is two triple.put ops');
  assert.deepEqual(ops.map((o) => o.op_id), ops.map((_, i) => `${A}:${i + 1}`), 'numbered as the brain’s own ops, without gaps');
  assert.ok(ops.every((o, i) => i === 0 || o.hlc > ops[i - 1]!.hlc), 'stamped in order');
  assert.equal(count(db, "SELECT COUNT(*) AS n FROM sync_ops WHERE kind = 'triple.put'"), 3);
  assert.equal(count(db, 'SELECT COUNT(*) AS n FROM sync_records'), 7 + episodes + 2);
  for (const table of ['memory_notes', 'memory_episodes', 'memory_triples']) {
    assert.equal(count(db, `SELECT COUNT(*) AS n FROM ${table} x WHERE NOT EXISTS (SELECT 1 FROM sync_records r WHERE r.record_id = x.id)`), 0, `every row of ${table} has its state`);
  }
  const note = db.get<{ op: string }>("SELECT op FROM sync_ops WHERE kind = 'note.put' ORDER BY ord LIMIT 1")!;
  assert.deepEqual((JSON.parse(note.op) as { base: unknown; body: { tags: unknown } }).base, null, 'a new record: written over nothing');
  assert.deepEqual((JSON.parse(note.op) as { body: { tags: unknown } }).body.tags, ['home']);

  assert.deepEqual(await backfillOps(db, a.log, { batch: 3 }), { notes: 0, episodes: 0, triples: 0, skipped: 0 });
  assert.equal(opsOf(a).length, ops.length, 'the second run appends nothing');
  // A write after the backfill is the journal's: backfill leaves it alone.
  await a.mem.memory.remember('The cabin key is under the blue pot');
  assert.deepEqual(await backfillOps(db, a.log), { notes: 0, episodes: 0, triples: 0, skipped: 0 });
  assert.equal(opsOf(a).length, ops.length + 1);
});

test('a run killed between two transactions is finished by the next, each record once', async (t) => {
  const a = await brainFromBeforeSync(A, (m) => someMemory(m, 10));
  t.after(() => closeAll(a));
  const db = a.mem.store;
  // The third transaction fails (the brain is killed before it commits).
  let n = 0;
  const dying: Store = Object.create(db) as Store;
  dying.write = (fn) => (++n === 3 ? Promise.reject(new Error('killed')) : db.write(fn));
  await assert.rejects(backfillOps(dying, a.log, { batch: 4 }), /killed/);
  assert.equal(opsOf(a).length, 8, 'the two committed batches are whole');

  const rest = await backfillOps(db, a.log, { batch: 4 });
  assert.equal(rest.notes, 2);
  const ids = db.all<{ record_id: string }>("SELECT record_id FROM sync_ops WHERE kind = 'note.put'").map((r) => r.record_id);
  assert.equal(ids.length, 10);
  assert.equal(new Set(ids).size, 10, 'no note was announced twice');
  assert.deepEqual(readCursor(db), { [A]: opsOf(a).length });
});

test('a record the op log holds a tombstone for is not announced again', async (t) => {
  const a = await brainFromBeforeSync(A, async (m) => {
    await m.memory.remember('The bike lock code is 7391');
    await m.memory.remember('The dentist is Dr Kowalski on Tuesday');
  });
  t.after(() => closeAll(a));
  const db = a.mem.store;
  const [gone, kept] = db.all<{ id: string }>('SELECT id FROM memory_notes ORDER BY seq').map((r) => r.id);
  // B's delete reached the op log; the tier table still holds the note (its write is not done yet, or
  // was lost): the tombstone is the op log's word, and backfill must not bring the note back.
  await db.write((d) => {
    const del = stampOp({ kind: 'note.delete', record_id: gone! }, B, 1, { wall: 1_750_000_000_000, logical: 0, brain: B });
    a.log.append(d, del);
    mergeOp(a.log, d, del);
  });
  assert.deepEqual(await backfillOps(db, a.log), { notes: 1, episodes: 0, triples: 0, skipped: 0 });
  assert.deepEqual(
    opsOf(a).filter((o) => o.kind === 'note.put').map((o) => o.record_id),
    [kept],
  );
});

test('a record a peer would refuse is skipped, not appended, and the rest go on', async (t) => {
  const a = await brainFromBeforeSync(A, async (m) => {
    await m.memory.remember('The bike lock code is 7391');
    await m.memory.addTriples([{ subject: 'Anna', predicate: 'likes', object: 'green tea' }], 'turn:a');
  });
  t.after(() => closeAll(a));
  const db = a.mem.store;
  // A note from an older brain with a source the wire refuses, and a fact whose id is not its hash.
  await db.write((d) => {
    d.run("UPDATE memory_notes SET source = '' WHERE text LIKE '%7391%'");
    d.run("UPDATE memory_triples SET object = 'black tea'");
  });
  assert.deepEqual(await backfillOps(db, a.log), { notes: 0, episodes: 0, triples: 0, skipped: 2 });
  assert.equal(opsOf(a).length, 0);
  await a.mem.memory.remember('The dentist is Dr Kowalski on Tuesday');
  assert.deepEqual(await backfillOps(db, a.log), { notes: 0, episodes: 0, triples: 0, skipped: 2 }, 'looked at again, still skipped');
});

test("a backfilled brain's records reach the other brain and both end with the same synced tables", async (t) => {
  const a = await brainFromBeforeSync(A, (m) => someMemory(m));
  const b = syncBrain(B, { start: 1_750_000_000_000 + 3_600_000 });
  t.after(() => closeAll(a, b));
  await b.mem.memory.remember('Cabin chore number 1 is checking the woodstove');
  await b.mem.memory.addTriples([{ subject: 'Anna', predicate: 'likes', object: 'green tea', confidence: 0.7 }], 'turn:b2');
  assert.equal(await exchange(a, b), 0, 'before the backfill, a has nothing to send');

  await backfillOps(a.mem.store, a.log, { batch: 2 });
  for (let i = 0; i < 10 && (await exchange(a, b)) + (await exchange(b, a)) > 0; i++);
  assert.deepEqual(syncedTables(a), syncedTables(b));
  assert.equal(syncedTables(b).notes!.length, 8);
  assert.deepEqual(
    b.mem.store.all<{ source: string }>("SELECT s.source FROM memory_triple_sources s JOIN memory_triples t ON t.id = s.triple_id WHERE t.object = 'green tea' ORDER BY s.source").map((r) => r.source),
    ['turn:a', 'turn:b', 'turn:b2'],
    'the fact learnt on both brains is one record with every source',
  );
});
