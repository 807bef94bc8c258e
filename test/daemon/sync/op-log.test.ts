// The sync data layer on two real brains (two homes): writes through the memory service become ops in
// the op log in their own transaction, ops travel outbound.ops → apply-remote.apply in both directions,
// in any order and more than once, and the synced tier tables end identical.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatMessage } from '../../../daemon/kernel/conversation';
import { collectTombstones, noteRevisions, readCursor } from '../../../daemon/sync/op-log';
import { BRAINS, mulberry32 } from '../../sync/sync-fixtures';
import { closeAll, exchange, opsOf as ops, pendingOf as pending, syncBrain, syncedTables, type SyncBrain } from './sync-brain';

const [A, B, C] = [BRAINS[0], BRAINS[1], BRAINS[2]];
const chat = (...turns: string[]): ChatMessage[] => turns.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content }));

/** Exchanges in both directions until neither side has anything the other lacks. */
async function settle(a: SyncBrain, b: SyncBrain): Promise<void> {
  for (let i = 0; i < 10; i++) if ((await exchange(a, b)) + (await exchange(b, a)) === 0) return;
  assert.fail('the brains did not settle');
}

test('writes on two homes, exchanged in a random order with duplicates, leave identical synced tables', async () => {
  for (const seed of [1, 2, 3]) {
    const random = mulberry32(seed);
    const a = syncBrain(A);
    const b = syncBrain(B, { start: 1_750_000_000_500 });
    const step = async (): Promise<void> => {
      const [from, to] = random() < 0.5 ? [a, b] : [b, a];
      // A duplicate: the same ops again from a cursor that is behind (a retransmission).
      if (random() < 0.3) await exchange(from, to, 512);
      const before = await to.applier.cursor();
      await exchange(from, to, 1 + Math.floor(random() * 4096));
      if (random() < 0.3) {
        const { outboundOps } = await import('../../../daemon/sync/outbound');
        for await (const batch of outboundOps(from.mem.store, before, 4096)) await to.applier.apply(batch, from.id);
      }
    };
    const n1 = await a.mem.memory.remember('The dentist is Dr Kowalski on Tuesday', { tags: ['health'] });
    const n2 = await a.mem.memory.remember('The bike lock code is 7391');
    await step();
    await b.mem.memory.remember('Anna likes green tea from Graz', { tags: ['family'] });
    const [fa] = await a.mem.memory.addTriples([{ subject: 'Anna', predicate: 'likes', object: 'green tea', confidence: 0.6 }], 'turn:a1');
    await b.mem.memory.addTriples([{ subject: 'anna', predicate: 'likes', object: 'Green Tea', confidence: 0.5 }], 'turn:b1');
    await b.mem.memory.addTriples([{ subject: 'home wifi', predicate: 'has password', object: 'hunter2', confidence: 0.9 }], 'turn:b2');
    await step();
    const ep = await a.mem.memory.recordEpisode({ sessionId: 's1', reason: 'session_end', messages: chat('Remember the boiler is booked for March.', "I'll remember that.", 'And the bike lock code?', 'It is 7391.') });
    assert.ok(ep);
    await step();
    await settle(a, b);
    await b.mem.memory.parts.notes.update(n1.id, { text: 'The dentist is Dr Kowalski on Wednesday' });
    await step();
    await a.mem.memory.forget(n2.id);
    await step();
    await settle(a, b);

    assert.deepEqual(syncedTables(a), syncedTables(b), `seed ${seed}`);
    const tables = syncedTables(a);
    const notes = tables.notes as { id: string; text: string }[];
    assert.deepEqual(notes.find((n) => n.id === n1.id)?.text, 'The dentist is Dr Kowalski on Wednesday');
    assert.equal(notes.some((n) => n.id === n2.id), false, 'the forgotten note is gone on both');
    assert.equal(notes.length, 2);
    const sources = (tables.sources as { triple_id: string; source: string }[]).filter((s) => s.triple_id === fa!.id).map((s) => s.source);
    assert.deepEqual(sources, ['turn:a1', 'turn:b1'], 'the same fact learnt on both homes is one fact with both sources');
    assert.equal((tables.episodes as { id: string }[]).length, 1);
    assert.deepEqual(readCursor(a.mem.store), readCursor(b.mem.store));
    assert.equal(pending(a) + pending(b), 0);
    assert.deepEqual(new Set(ops(a).map((o) => o.op_id)), new Set(ops(b).map((o) => o.op_id)), 'each op is in both logs once');
    await closeAll(a, b);
  }
});

test('a concurrent edit on both homes shows one winner everywhere and keeps the loser as a revision on both', async () => {
  const a = syncBrain(A);
  const b = syncBrain(B, { start: 1_750_000_000_500 });
  const note = await a.mem.memory.remember('The boiler service is booked for March');
  await settle(a, b);
  await a.mem.memory.parts.notes.update(note.id, { text: 'The boiler service is booked for April' });
  await b.mem.memory.parts.notes.update(note.id, { text: 'The boiler service is booked for May' });
  await settle(a, b);
  assert.deepEqual(syncedTables(a), syncedTables(b));
  const ra = noteRevisions(a.mem.store, note.id);
  const rb = noteRevisions(b.mem.store, note.id);
  assert.deepEqual(ra, rb);
  assert.ok(ra);
  const texts = [ra.current?.body.text, ...ra.history.map((h) => h.body.text)].sort();
  assert.deepEqual(texts, ['The boiler service is booked for April', 'The boiler service is booked for May'], 'neither edit is lost; March was written over');
  assert.equal(a.mem.memory.parts.notes.get(note.id)?.text, ra.current?.body.text);
  // Editing again does not drop the revision that lost.
  await a.mem.memory.parts.notes.update(note.id, { text: 'The boiler service is booked for June' });
  await settle(a, b);
  assert.equal(noteRevisions(b.mem.store, note.id)?.history.length, 1);
  assert.equal(b.mem.memory.parts.notes.get(note.id)?.text, 'The boiler service is booked for June');
  await closeAll(a, b);
});

test('a restart keeps the clock growing, the seq counting and the cursors', async () => {
  const a = syncBrain(A);
  const b = syncBrain(B);
  await a.mem.memory.remember('Anna likes green tea from Graz');
  await a.mem.memory.remember('The bike lock code is 7391');
  await exchange(a, b);
  const lastA = ops(a).at(-1)!.hlc;
  const dirA = a.mem.dir;
  const dirB = b.mem.dir;
  await a.mem.close({ keep: true });
  await b.mem.close({ keep: true });
  // The physical clock went back an hour across the restart.
  const a2 = syncBrain(A, { dir: dirA, start: 1_750_000_000_000 - 3_600_000 });
  const b2 = syncBrain(B, { dir: dirB, start: 1_750_000_000_000 - 3_600_000 });
  assert.deepEqual(readCursor(b2.mem.store), { [A]: 2 }, "b's cursor survived");
  assert.equal(await exchange(a2, b2), 0, 'nothing is sent again');
  await a2.mem.memory.remember('The dentist is Dr Kowalski on Tuesday');
  const after = ops(a2).at(-1)!;
  assert.equal(after.op_id, `${A}:3`);
  assert.ok(after.hlc > lastA, `${after.hlc} > ${lastA}`);
  assert.equal(await exchange(a2, b2), 1);
  // B's first stamp after the restart is above everything it received.
  await b2.mem.memory.remember('The boiler service is booked for March');
  assert.ok(ops(b2).at(-1)!.hlc > after.hlc);
  await a2.mem.close({ keep: true });
  await b2.mem.close();
  assert.throws(() => syncBrain(B, { dir: dirA }), /belongs to brain/, "a brain does not take another brain's op log");
  const { rmSync } = await import('node:fs');
  rmSync(dirA, { recursive: true, force: true });
});

test('a tombstone goes once every known peer holds the delete, and not before', async () => {
  const a = syncBrain(A);
  const b = syncBrain(B);
  const note = await a.mem.memory.remember('The bike lock code is 7391');
  await settle(a, b);
  await a.mem.memory.forget(note.id);
  const tombstones = (x: SyncBrain): number => x.mem.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM sync_records WHERE tombstone IS NOT NULL')!.n;
  assert.equal(tombstones(a), 1);
  assert.equal(collectTombstones(a.mem.store, [readCursor(b.mem.store)]), 0, 'b has not got the delete yet');
  assert.equal(tombstones(a), 1);
  await settle(a, b);
  assert.equal(collectTombstones(a.mem.store, [readCursor(b.mem.store)]), 1);
  assert.equal(tombstones(a), 0);
  assert.equal(noteRevisions(a.mem.store, note.id), null, 'the record had nothing live and went');
  assert.equal(await exchange(b, a), 0, 'and nothing brings it back');
  assert.equal(a.mem.memory.parts.notes.get(note.id), undefined);
  await closeAll(a, b);
});

test("a third brain relays ops it did not write, and whoever hears of a change first, all three agree", async () => {
  const a = syncBrain(A);
  const b = syncBrain(B, { start: 1_750_000_000_300 });
  const c = syncBrain(C, { start: 1_750_000_000_600 });
  const note = await a.mem.memory.remember('The cabin key is under the blue pot');
  await exchange(a, c);
  await exchange(c, b);
  assert.equal(b.mem.memory.parts.notes.get(note.id)?.text, 'The cabin key is under the blue pot', "b has a's note through c");
  await b.mem.memory.parts.notes.update(note.id, { text: 'The cabin key is under the red pot' });
  await c.mem.memory.forget(note.id);
  await exchange(b, a);
  await exchange(c, a);
  await exchange(a, b);
  await exchange(a, c);
  await exchange(b, c);
  await exchange(c, b);
  assert.deepEqual(syncedTables(a), syncedTables(b));
  assert.deepEqual(syncedTables(b), syncedTables(c));
  assert.deepEqual(readCursor(a.mem.store), readCursor(c.mem.store));
  // The delete and the edit were concurrent: the later stamp decides, the same everywhere.
  const view = noteRevisions(a.mem.store, note.id);
  assert.deepEqual(noteRevisions(b.mem.store, note.id), view);
  assert.deepEqual(noteRevisions(c.mem.store, note.id), view);
  await closeAll(a, b, c);
});
