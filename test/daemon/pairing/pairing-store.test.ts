import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { activeDevices, endToken, insertDevice, insertToken, PAIRING_MIGRATIONS, revokeDevice, tokenByHash, type TokenRow } from '../../../daemon/pairing/pairing-store';

void test('endToken moves a token out of unclaimed once; revokeDevice once; a revoked device leaves the active list', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pairing-store-'));
  const store = new SqliteStore(join(dir, 'brain.db'));
  t.after(() => (store.close(), rmSync(dir, { recursive: true, force: true })));
  store.migrate('pairing', PAIRING_MIGRATIONS);
  const row: TokenRow = { pair_id: 'pair_1', token_hash: 'h1', kind: 'phone', name: null, node_id: null, pin_salt: null, pin_hash: null, pin_verified: 0, pin_failures: 0, state: 'unclaimed', created_at: 1, expires_at: 2, device_id: null };
  await store.write((db) => insertToken(db, row));
  assert.deepEqual(tokenByHash(store, 'h1'), row);
  const [first, second] = await Promise.all([store.write((db) => endToken(db, 'pair_1', 'claimed', 3, 'dev_1')), store.write((db) => endToken(db, 'pair_1', 'revoked', 3))]);
  assert.deepEqual([first, second], [true, false]);
  assert.equal(tokenByHash(store, 'h1')?.state, 'claimed');
  await store.write((db) => insertDevice(db, { device_id: 'dev_1', kind: 'phone', name: 'p', node_id: null, platform: null, key_hash: 'k', pair_id: 'pair_1', paired_at: 3 }));
  assert.equal(activeDevices(store).length, 1);
  assert.equal(await store.write((db) => revokeDevice(db, 'dev_1', 4)), true);
  assert.equal(await store.write((db) => revokeDevice(db, 'dev_1', 5)), false);
  assert.deepEqual(activeDevices(store), []);
});
