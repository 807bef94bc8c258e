// daemon/sync/peer-cursors.ts: peers' cursors kept durably (written only when they change) and the
// tombstone collection they allow — never while a peer was never heard from or lacks the delete.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readCursor } from '../../../daemon/sync/op-log';
import { PeerCursors } from '../../../daemon/sync/peer-cursors';
import { closeAll, exchange, syncBrain, type SyncBrain } from './sync-brain';

const A = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const B = '7a8b9c0d-1e2f-4a3b-9c4d-5e6f7a8b9c0d';
const C = '0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e';

const tombstones = (x: SyncBrain): number => x.mem.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM sync_records WHERE tombstone IS NOT NULL')!.n;
const savedAt = (x: SyncBrain, peer: string): number | undefined => x.mem.store.get<{ updated_at: number }>('SELECT updated_at FROM sync_peers WHERE peer = ?', [peer])?.updated_at;

test('a cursor is saved when it changes and read back by a new instance', async () => {
  const a = syncBrain(A);
  const cursors = new PeerCursors(a.mem.store);
  assert.equal(cursors.get(B), null);
  await cursors.record(B, { [A]: 3 }, 100);
  await cursors.record(B, { [A]: 3, [C]: 0 }, 200);
  assert.equal(savedAt(a, B), 100, 'the same ops: not written again');
  await cursors.record(B, { [A]: 4 }, 300);
  assert.equal(savedAt(a, B), 300);
  assert.deepEqual(new PeerCursors(a.mem.store).get(B), { [A]: 4 });
  await closeAll(a);
});

test('tombstones go only once every active peer is known to hold the delete', async () => {
  const a = syncBrain(A);
  const b = syncBrain(B);
  const c = syncBrain(C);
  const note = await a.mem.memory.remember('The bike lock code is 7391');
  await exchange(a, b);
  await exchange(a, c);
  await a.mem.memory.forget(note.id);
  const cursors = new PeerCursors(a.mem.store);
  assert.equal(await cursors.collect([B, C]), 0, 'neither peer was ever heard from');
  await exchange(a, b);
  await cursors.record(B, readCursor(b.mem.store), 1);
  assert.equal(await cursors.collect([B, C]), 0, 'c was never heard from');
  await cursors.record(C, readCursor(c.mem.store), 1);
  assert.equal(await cursors.collect([B, C]), 0, 'c lacks the delete');
  assert.equal(tombstones(a), 1);
  await exchange(a, c);
  await cursors.record(C, readCursor(c.mem.store), 2);
  assert.equal(await cursors.collect([B, C]), 1);
  assert.equal(tombstones(a), 0);
  await closeAll(a, b, c);
});
