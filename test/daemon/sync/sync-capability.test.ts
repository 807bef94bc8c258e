// daemon/sync/sync-capability.ts in a brain assembled in-process with the real capabilities. With sync
// on: status names this brain and the fingerprint of the key in $SVC_HOME/sync-key (0600), a note
// written through the API becomes a local op, and /sync is mounted. With settings sync.enabled false:
// status says why it is off, /sync is not mounted, pairing is a 409, the svc_sync_* series stay at 0,
// and no key is made and no op is journaled. And two such brains paired through their APIs: the pairing
// is a device of kind brain on the minting brain, and revoking one forgets the other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import type { LightMyRequestResponse } from 'fastify';
import { CAPABILITIES } from '../../../daemon/capabilities';
import { defineCapability } from '../../../daemon/kernel/capability';
import type { Store } from '../../../daemon/store/store';
import { SYNC_OFF_REASON } from '../../../daemon/sync/sync-capability';
import { loadBrainId } from '../../../mesh/brain-id';
import { newPairToken } from '../../../mesh/pair-token';
import { SyncStatus, type SyncPeerView } from '../../../protocol/sync-api';
import { SYNC_FAILURE_REASONS } from '../../../protocol/sync-link';
import { keyFingerprint } from '../../../sync/identity-keys';
import { SYNC_KEY_FILE, loadSyncIdentity } from '../../../sync/identity-key-file';
import { inProcessBrain, type InProcessBrain } from '../../helpers/assembled-brain';
import { samples } from '../../helpers/metric-samples';
import { until } from '../../helpers/poll';
import { brainId, expectStatus, pairBrains, post, type ApiBrain } from '../../helpers/sync-brains';

/** The real capabilities plus one that only hands the test the brain's store. */
function withStore(): { capabilities: typeof CAPABILITIES; store: () => Store } {
  let held: Store | undefined;
  const spy = defineCapability({
    name: 'test-store',
    create: ({ store }) => {
      held = store;
      return {};
    },
  });
  return { capabilities: [...CAPABILITIES, spy], store: () => held ?? assert.fail('the store was not handed over') };
}

type Api = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) => Promise<LightMyRequestResponse>;

const apiOf =
  (b: InProcessBrain): Api =>
  (method, url, payload) =>
    b.brain.app.inject({ method, url, headers: { authorization: `Bearer ${b.token}` }, ...(payload === undefined ? {} : { payload }) });

async function status(api: Api): Promise<SyncStatus> {
  const res = await api('GET', '/api/sync/status');
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json<unknown>();
  if (!Value.Check(SyncStatus, body)) assert.fail(`a SyncStatus: ${res.body}`);
  return body;
}

async function writeNote(api: Api, text: string): Promise<string> {
  const res = await api('POST', '/api/memory/note', { text });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ id: string }>().id;
}

/** The op log's rows, or null when brain.db has no op log at all. */
function syncOps(store: Store): { kind: string; record_id: string; origin: string }[] | null {
  if (store.get('SELECT name FROM sqlite_master WHERE type = ? AND name = ?', ['table', 'sync_ops']) === undefined) return null;
  return store.all('SELECT kind, record_id, origin FROM sync_ops ORDER BY ord');
}

/** The svc_sync_* samples of GET /metrics, as `name{labels} value`. */
async function syncSeries(api: Api): Promise<string[]> {
  const res = await api('GET', '/metrics');
  assert.equal(res.statusCode, 200);
  return samples(res.body)
    .filter((s) => s.name.startsWith('svc_sync_'))
    .map((s) => `${s.name}${JSON.stringify(s.labels)} ${s.value}`)
    .sort();
}

void test('with sync on: status names this brain and its key, a note written through the API is a local op, /sync is mounted, the key file is 0600', { timeout: 30_000 }, async (t) => {
  const { capabilities, store } = withStore();
  const b = await inProcessBrain(t, { capabilities });
  const api = apiOf(b);

  const brainId = loadBrainId(b.home);
  const keyFile = join(b.home, SYNC_KEY_FILE);
  assert.ok(existsSync(keyFile), 'the sync key is made');
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  const before = await status(api);
  assert.equal(before.enabled, true);
  assert.equal(before.disabled_by, null);
  assert.equal(before.brain_id, brainId);
  assert.equal(before.key_fingerprint, keyFingerprint(loadSyncIdentity(b.home, brainId).publicKey));
  assert.equal(before.peers, 0);

  const id = await writeNote(api, 'The boiler is booked for March');
  const after = await status(api);
  assert.equal(after.ops.local, before.ops.local + 1, 'the note is one more op written here');
  assert.equal(after.ops.total, before.ops.total + 1);
  assert.equal(after.cursor[brainId], after.ops.local);
  assert.deepEqual(syncOps(store())?.filter((op) => op.record_id === id), [{ kind: 'note.put', record_id: id, origin: brainId }]);
  const revisions = await api('GET', `/api/memory/notes/${id}/revisions`);
  assert.equal(revisions.statusCode, 200, revisions.body);
  assert.equal(revisions.json<{ current: { text: string } }>().current.text, 'The boiler is booked for March');

  // /sync is mounted: once the op log is up to date a plain GET is told to upgrade.
  await until(
    () => 'GET /sync to answer 426',
    async () => ((await api('GET', '/sync')).statusCode === 426 ? true : undefined),
    10_000,
  );
  assert.equal((await api('GET', '/api/sync/peers')).json<{ peers: unknown[] }>().peers.length, 0);
});

void test('with sync.enabled false: status says so, /sync is not mounted, pairing is a 409, the metrics stay at 0, no key and no op', { timeout: 30_000 }, async (t) => {
  const { capabilities, store } = withStore();
  const b = await inProcessBrain(t, { capabilities, file: { sync: { enabled: false } } });
  const api = apiOf(b);

  const off = await status(api);
  assert.equal(off.enabled, false);
  assert.equal(off.disabled_by, SYNC_OFF_REASON);
  assert.equal(off.brain_id, loadBrainId(b.home));
  assert.equal(off.key_fingerprint, null);
  assert.deepEqual(off.ops, { local: 0, total: 0 });
  assert.equal((await api('GET', '/api/sync/peers')).json<{ peers: unknown[] }>().peers.length, 0);

  const notMounted = await api('GET', '/sync');
  assert.equal(notMounted.statusCode, 404, notMounted.body);
  const pair = await api('POST', '/api/sync/pair', { url: `svc://pair?v=1&kind=brain&brain=${off.brain_id}&token=${newPairToken()}&exp=1999999999&pin=0&url=http%3A%2F%2F10.0.0.1%3A9090` });
  assert.equal(pair.statusCode, 409, pair.body);
  assert.deepEqual(pair.json<{ error: { details: unknown } }>().error.details, { sync: 'disabled', disabled_by: SYNC_OFF_REASON });
  assert.equal((await api('POST', '/api/sync/now', {})).statusCode, 409);

  const id = await writeNote(api, 'The bike lock code is 7391');
  assert.deepEqual((syncOps(store()) ?? []).filter((op) => op.record_id === id), [], 'the note is not journaled');
  assert.deepEqual(syncOps(store()) ?? [], [], 'nothing is journaled');
  assert.equal(existsSync(join(b.home, SYNC_KEY_FILE)), false, 'no sync key is made');
  assert.deepEqual((await status(api)).ops, { local: 0, total: 0 });

  assert.deepEqual(await syncSeries(api), ['svc_sync_active_peers{} 0', 'svc_sync_was_active_recent{} 0', ...SYNC_FAILURE_REASONS.map((reason) => `svc_sync_failures_total${JSON.stringify({ reason })} 0`)].sort());
});

/** An in-process brain as the sync test helpers see it: where peers reach it, and its API. */
function apiBrain(b: InProcessBrain): ApiBrain {
  const url = `http://127.0.0.1:${b.brain.listener.addresses()[0]!.port}`;
  return { url, api: (path, init = {}) => fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${b.token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } }) };
}

const devicesOf = async (brain: ApiBrain): Promise<{ device_id: string; kind: string; name: string }[]> => (await expectStatus<{ devices: { device_id: string; kind: string; name: string }[] }>(brain, 200, '/api/devices/paired')).devices;
const peersOf = async (brain: ApiBrain): Promise<SyncPeerView[]> => (await expectStatus<{ peers: SyncPeerView[] }>(brain, 200, '/api/sync/peers')).peers;

void test('two brains pair through their APIs: the peer is a paired device of kind brain, a note crosses, revoking the device forgets the peer, forgetting the peer revokes its device', { timeout: 60_000 }, async (t) => {
  const house = apiBrain(await inProcessBrain(t));
  const cabin = apiBrain(await inProcessBrain(t));
  const [houseId, cabinId] = [await brainId(house), await brainId(cabin)];

  const paired = await pairBrains(house, cabin);
  assert.equal(paired.brain_id, houseId);
  assert.equal(paired.device_id, null, 'the completing side holds no device of the pairing');
  assert.equal(paired.url, `${house.url.replace('http://', 'ws://')}/sync`);
  const onHouse = (await peersOf(house)).find((p) => p.brain_id === cabinId) ?? assert.fail('the house pinned the cabin');
  assert.deepEqual((await devicesOf(house)).map((d) => [d.device_id, d.kind, d.name]), [[onHouse.device_id, 'brain', 'peer']], 'the peer is a device of kind brain, named as its token was minted');

  const note = await expectStatus<{ id: string }>(house, 201, '/api/memory/note', post({ text: 'The cabin key is under the blue pot' }));
  await until(
    () => `note ${note.id} to reach the cabin`,
    async () => ((await cabin.api(`/api/memory/notes/${note.id}`)).status === 200 ? true : undefined),
    20_000,
  );

  // `svc pair revoke dev_…` on the house forgets the cabin there.
  await expectStatus(house, 200, `/api/devices/${onHouse.device_id}`, { method: 'DELETE' });
  const forgotten = await until(
    () => 'the revoked device to forget the peer',
    async () => (await peersOf(house)).find((p) => p.brain_id === cabinId && p.state === 'forgotten'),
    10_000,
  );
  assert.equal(forgotten.brain_id, cabinId);
  assert.equal((await expectStatus<SyncStatus>(house, 200, '/api/sync/status')).peers, 0);
  await expectStatus(house, 404, `/api/sync/peers/${cabinId}`, { method: 'DELETE' });

  // Paired again, then `svc sync forget` on the house revokes the new device.
  await pairBrains(house, cabin);
  const again = (await peersOf(house)).find((p) => p.brain_id === cabinId) ?? assert.fail('the house pinned the cabin again');
  assert.notEqual(again.state, 'forgotten');
  assert.ok(again.device_id !== null && again.device_id !== onHouse.device_id, 'a fresh device');
  assert.deepEqual((await devicesOf(house)).map((d) => d.device_id), [again.device_id]);
  await expectStatus(house, 200, `/api/sync/peers/${cabinId}`, { method: 'DELETE' });
  assert.deepEqual(await devicesOf(house), [], 'the pairing is revoked with the peer');
  assert.equal((await peersOf(house)).find((p) => p.brain_id === cabinId)?.state, 'forgotten');
});
