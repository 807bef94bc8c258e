// protocol/sync-api.ts: the HTTP shapes of sync (docs/sync.md "What the user sees"). Each accepts a
// well-formed example of what the brain answers or takes, and refuses a bad brain id, a /sync URL that
// is not ws(s)://, a PIN of the wrong length, a property it does not name, and a wait out of range.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { NoteRevisions, SyncNowBody, SyncNowResult, SyncPairAcceptBody, SyncPairBody, SyncPeerList, SyncPeerView, SyncStatus } from '../../protocol/sync-api';
import { pairRequest } from '../../sync/identity-pairing';
import { generateKeypair, identityOf, keyFingerprint } from '../../sync/identity-keys';

const ME = '0f0e0d0c-0b0a-4908-8706-050403020100';
const PEER = '1a2b3c4d-5e6f-4a0b-9c1d-2e3f4a5b6c7d';
const T0 = 1_764_000_000_000;
const TOKEN = `svcpt_${'A'.repeat(43)}`;
const identity = identityOf(ME, generateKeypair());

const statusOn = {
  enabled: true,
  disabled_by: null,
  brain_id: ME,
  key_fingerprint: keyFingerprint(identity.publicKey),
  active_peers: 1,
  was_active_recent: true,
  peers: 1,
  last_synced_at: T0,
  ops: { local: 3, total: 5 },
  cursor: { [ME]: 3, [PEER]: 2 },
  failures: { auth: 1, timeout: 0 },
};
const statusOff = { ...statusOn, enabled: false, disabled_by: 'settings sync.enabled=false', key_fingerprint: null, active_peers: 0, was_active_recent: false, peers: 0, last_synced_at: null, ops: { local: 0, total: 0 }, cursor: {}, failures: {} };
const peerView = {
  brain_id: PEER,
  name: 'cabin',
  device_id: 'dev_0123',
  url: 'ws://192.168.1.20:9090/sync',
  source: 'paired',
  state: 'connected',
  direction: 'outbound',
  paired_at: T0,
  last_synced_at: T0 + 1000,
  next_attempt_at: null,
  last_failure: { reason: 'timeout', code: 'timeout', message: 'no handshake in 10 s', at: T0 - 5000 },
  ops_behind: 0,
  cursor: { [ME]: 3 },
};
const pairBody = { url: `svc://pair?v=1&kind=brain&token=${TOKEN}`, pin: '123456', sync_url: 'wss://cabin.example:443/sync' };
const acceptBody = { ...pairRequest(identity, TOKEN, 'house'), urls: ['ws://192.168.1.10:9090/sync', 'wss://house.example/sync'] };
const revision = { text: 'The boiler is booked for March', source: 'user', tags: ['home'], brain_id: ME, at: T0, hlc: `019ab697e800-000000-${ME}` };
const nowResult = { peers: [{ brain_id: PEER, outcome: 'synced', sent: 4, received: 2, failure: null }, { brain_id: ME, outcome: 'unreachable', sent: 0, received: 0, failure: { reason: 'io', code: 'io', message: 'refused', at: T0 } }] };

/** The JSON pointers of what `schema` refuses in `value` (none: it accepts it). */
const problems = (schema: TSchema, value: unknown): string[] => [...Value.Errors(schema, value)].map((e) => e.path);

function accepts(schema: TSchema, value: unknown, what: string): void {
  assert.deepEqual(problems(schema, value), [], `${what} is accepted`);
  assert.equal(Value.Check(schema, value), true, what);
}

/** Refused, and the first problem is at `path` (so the refusal is for the reason the test names). */
function refuses(schema: TSchema, value: unknown, path: string, what: string): void {
  assert.equal(Value.Check(schema, value), false, `${what} is refused`);
  assert.ok(problems(schema, value).includes(path), `${what}: a problem at ${path}, got ${JSON.stringify(problems(schema, value))}`);
}

void test('well-formed status (on and off), peers, pair, accept, now and revisions are accepted', () => {
  accepts(SyncStatus, statusOn, 'status with sync on');
  accepts(SyncStatus, statusOff, 'status with sync off');
  accepts(SyncPeerView, peerView, 'a connected peer');
  accepts(SyncPeerView, { ...peerView, device_id: null, url: null, state: 'idle', direction: null, last_synced_at: null, last_failure: null, cursor: null }, 'a peer that only dials in');
  accepts(SyncPeerList, { peers: [peerView] }, 'the peer list');
  accepts(SyncPairBody, pairBody, 'a pair body with PIN and sync URL');
  accepts(SyncPairBody, { url: pairBody.url }, 'a pair body with only the URL');
  accepts(SyncPairAcceptBody, acceptBody, 'an accept body from pairRequest with urls');
  accepts(SyncPairAcceptBody, pairRequest(identity, TOKEN), 'an accept body without name or urls');
  accepts(SyncNowBody, {}, 'an empty now body');
  accepts(SyncNowBody, { peer: PEER, timeout_ms: 100 }, 'now with the shortest wait');
  accepts(SyncNowBody, { timeout_ms: 120_000 }, 'now with the longest wait');
  accepts(SyncNowResult, nowResult, 'a now result');
  accepts(NoteRevisions, { id: 'n_1', current: revision, history: [{ ...revision, text: 'The boiler is booked for April' }], deleted: false }, 'a note with a concurrent edit');
  accepts(NoteRevisions, { id: 'n_1', current: null, history: [], deleted: true }, 'a deleted note');
});

void test('a brain id that is not a v4 UUID is refused wherever one is named', () => {
  for (const bad of ['brn_house', ME.toUpperCase(), `${ME}0`, '0f0e0d0c-0b0a-1908-8706-050403020100', '']) {
    refuses(SyncStatus, { ...statusOn, brain_id: bad }, '/brain_id', `status brain id ${JSON.stringify(bad)}`);
    refuses(SyncPeerView, { ...peerView, brain_id: bad }, '/brain_id', `peer brain id ${JSON.stringify(bad)}`);
    refuses(SyncNowBody, { peer: bad }, '/peer', `now peer ${JSON.stringify(bad)}`);
    refuses(SyncPairAcceptBody, { ...acceptBody, brain_id: bad }, '/brain_id', `accept brain id ${JSON.stringify(bad)}`);
  }
  refuses(SyncStatus, { ...statusOn, cursor: { 'not-a-brain': 1 } }, '/cursor/not-a-brain', 'a cursor naming something that is not a brain');
});

void test('a /sync URL must be ws:// or wss://', () => {
  for (const bad of ['http://cabin.local:9090/sync', 'https://cabin.example/sync', 'cabin.local:9090/sync', 'WS://cabin/sync', '']) {
    refuses(SyncPairBody, { ...pairBody, sync_url: bad }, '/sync_url', `sync_url ${JSON.stringify(bad)}`);
    refuses(SyncPairAcceptBody, { ...acceptBody, urls: ['ws://ok/sync', bad] }, '/urls/1', `accept url ${JSON.stringify(bad)}`);
  }
  refuses(SyncPairAcceptBody, { ...acceptBody, urls: Array.from({ length: 9 }, (_, i) => `ws://10.0.0.${i}/sync`) }, '/urls', 'nine urls');
});

void test('a PIN is 4 to 8 digits', () => {
  for (const pin of ['1234', '12345678']) accepts(SyncPairBody, { ...pairBody, pin }, `PIN ${pin}`);
  for (const pin of ['123', '123456789', '12a4', ' 1234', '']) refuses(SyncPairBody, { ...pairBody, pin }, '/pin', `PIN ${JSON.stringify(pin)}`);
  refuses(SyncPairBody, { ...pairBody, pin: 1234 }, '/pin', 'a PIN as a number');
});

void test('a property the schema does not name is refused, at every level', () => {
  refuses(SyncStatus, { ...statusOn, extra: 1 }, '/extra', 'status');
  refuses(SyncStatus, { ...statusOn, ops: { local: 0, total: 0, remote: 0 } }, '/ops/remote', 'status ops');
  refuses(SyncPeerView, { ...peerView, key: 'x' }, '/key', 'peer view');
  refuses(SyncPeerView, { ...peerView, last_failure: { ...peerView.last_failure, stack: 'x' } }, '/last_failure', 'a peer failure');
  refuses(SyncPeerList, { peers: [], more: true }, '/more', 'peer list');
  refuses(SyncPairBody, { ...pairBody, token: TOKEN }, '/token', 'pair body');
  refuses(SyncPairAcceptBody, { ...acceptBody, device_key: 'svcdk_x' }, '/device_key', 'accept body');
  refuses(SyncNowBody, { timeout: 1000 }, '/timeout', 'now body');
  refuses(SyncNowResult, { peers: [{ ...nowResult.peers[0], skipped: 0 }] }, '/peers/0/skipped', 'now result peer');
  refuses(NoteRevisions, { id: 'n_1', current: { ...revision, deleted: false }, history: [], deleted: false }, '/current', 'a revision');
});

void test('timeout_ms is an integer from 100 to 120000', () => {
  for (const timeout_ms of [99, 0, -1, 120_001, 1e9]) refuses(SyncNowBody, { timeout_ms }, '/timeout_ms', `timeout_ms ${timeout_ms}`);
  refuses(SyncNowBody, { timeout_ms: 1500.5 }, '/timeout_ms', 'a fractional timeout');
  refuses(SyncNowBody, { timeout_ms: '1000' }, '/timeout_ms', 'a timeout as text');
});

void test('enumerations and counts: a peer state, source or outcome outside its set, or a negative count, is refused', () => {
  refuses(SyncPeerView, { ...peerView, state: 'syncing' }, '/state', 'state');
  refuses(SyncPeerView, { ...peerView, source: 'dns' }, '/source', 'source');
  refuses(SyncPeerView, { ...peerView, ops_behind: -1 }, '/ops_behind', 'ops behind');
  refuses(SyncPeerView, { ...peerView, last_failure: { ...peerView.last_failure, reason: 'network' } }, '/last_failure', 'a failure reason outside the bounded set');
  refuses(SyncNowResult, { peers: [{ ...nowResult.peers[0], outcome: 'partial' }] }, '/peers/0/outcome', 'outcome');
  refuses(SyncStatus, { ...statusOn, failures: { auth: -1 } }, '/failures/auth', 'a negative failure count');
});
