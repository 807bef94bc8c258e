// daemon/sync/sync-peers.ts: the peers pairing pinned, on a real SQLite file — what the handshake sees
// (a forgotten peer is revoked), pairing again bringing a forgotten peer back with its new key, the
// lookups by device, and that everything survives a restart (a new SyncPeers on the same store).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { SYNC_PEERS_COMPONENT, SYNC_PEERS_MIGRATIONS, SyncPeers } from '../../../daemon/sync/sync-peers';

const A = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const B = '7a8b9c0d-1e2f-4a3b-9c4d-5e6f7a8b9c0d';
const KEY1 = 'a'.repeat(43);
const KEY2 = 'b'.repeat(43);

function open(dir: string): { store: SqliteStore; peers: SyncPeers } {
  const store = new SqliteStore(join(dir, 'brain.db'));
  store.migrate(SYNC_PEERS_COMPONENT, SYNC_PEERS_MIGRATIONS);
  return { store, peers: new SyncPeers(store) };
}

test('pin, forget, pin again: the handshake view follows, and a restart reads the same peers back', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sync-peers-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const first = open(dir);
  assert.equal(first.peers.peer(A), undefined);
  await first.peers.pin({ brainId: A, publicKey: KEY1, name: 'cabin', deviceId: 'dev_1', url: 'ws://cabin.local:9090/sync' }, 1000);
  await first.peers.pin({ brainId: B, publicKey: KEY2, name: 'laptop', deviceId: null, url: null }, 2000);
  assert.deepEqual(first.peers.peer(A), { brainId: A, publicKey: KEY1, revoked: false });
  assert.equal(first.peers.byDevice('dev_1')?.brainId, A);
  assert.deepEqual(first.peers.list().map((p) => p.name), ['cabin', 'laptop']);

  assert.equal(await first.peers.forget(A, 3000), true);
  assert.equal(await first.peers.forget(A, 3001), false, 'already forgotten');
  assert.equal(await first.peers.forget('0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e', 3002), false, 'never paired');
  assert.deepEqual(first.peers.peer(A), { brainId: A, publicKey: KEY1, revoked: true });
  assert.deepEqual(first.peers.active().map((p) => p.brainId), [B]);
  await first.peers.synced(B, 5000);
  first.store.close();

  const second = open(dir);
  t.after(() => second.store.close());
  assert.deepEqual(second.peers.peer(A), { brainId: A, publicKey: KEY1, revoked: true });
  assert.equal(second.peers.get(A)?.forgottenAt, 3000);
  assert.equal(second.peers.get(B)?.lastSyncedAt, 5000);
  // Pairing again: the new key, not forgotten any more, the last sync kept.
  await second.peers.pin({ brainId: A, publicKey: KEY2, name: 'cabin', deviceId: 'dev_2', url: null }, 6000);
  assert.deepEqual(second.peers.peer(A), { brainId: A, publicKey: KEY2, revoked: false });
  assert.equal(second.peers.byDevice('dev_1'), undefined);
  assert.equal(second.peers.byDevice('dev_2')?.pairedAt, 6000);
});

test('the last sync time is kept in memory at once and written at most once a minute', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sync-peers-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { store, peers } = open(dir);
  t.after(() => store.close());
  await peers.pin({ brainId: A, publicKey: KEY1, name: 'cabin', deviceId: null, url: null }, 0);
  const stored = (): number | null => store.get<{ last_synced_at: number | null }>('SELECT last_synced_at FROM sync_pinned WHERE brain_id = ?', [A])!.last_synced_at;
  await peers.synced(A, 1_000);
  assert.equal(stored(), 1_000);
  await peers.synced(A, 30_000);
  assert.equal(peers.get(A)?.lastSyncedAt, 30_000);
  assert.equal(stored(), 1_000, 'not written again within the minute');
  await peers.synced(A, 61_000);
  assert.equal(stored(), 61_000);
});
