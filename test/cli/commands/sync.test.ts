// svc sync against a loopback stand-in for the brain that answers with the shapes of
// protocol/sync-api.ts: status (on, and off with its reason), peers, pair (and its refusals: a PIN
// needed, sync off), now (exit 1 unless every peer synced), forget by a prefix (an ambiguous one is
// exit 2 naming the candidates); each with its --json line, and the argument checks before any call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { fakeBrain, io } from '../../helpers/cli-rig';
import { describePeers, describeStatus, matchPeer, nowTimeoutMs, pairProblem, syncForget, syncNow, syncPair, syncPeers, syncStatus } from '../../../cli/commands/sync';
import { SyncNowResult, SyncPeerList, SyncPeerView, SyncStatus } from '../../../protocol/sync-api';
import { encodePairUrl } from '../../../mesh/pair-payload';

const NOW = Date.UTC(2026, 10, 25, 7, 0, 0);
const A = '1b4e28ba-2fa1-4d3b-a3f5-ef19b2d0a1c3';
const B = '1b4e28bb-0000-4000-8000-000000000002';
const C = '9c0ffee0-0000-4000-8000-000000000003';
const SELF = '5e1f0000-0000-4000-8000-000000000000';
const TOKEN = `svcpt_${'x'.repeat(43)}`;

const pairUrl = (kind: 'brain' | 'phone', pin = false): string =>
  encodePairUrl({ v: 1, kind, brain_id: A, token: TOKEN, expires_at: NOW / 1000 + 600, pin_required: pin, urls: ['http://192.168.1.20:9090'], mdns: null });

/** Checked against the protocol schema, so the stand-in answers only what the brain can. */
function valid<T>(schema: Parameters<typeof Value.Check>[0], value: T): T {
  assert.ok(Value.Check(schema, value), JSON.stringify([...Value.Errors(schema, value)].slice(0, 3)));
  return value;
}

const peer = (brain_id: string, name: string, extra: Partial<SyncPeerView> = {}): SyncPeerView =>
  valid(SyncPeerView, {
    brain_id,
    name,
    device_id: null,
    url: 'ws://kitchen.local:7420/sync',
    source: 'paired',
    state: 'connected',
    direction: 'outbound',
    paired_at: NOW - 86_400_000,
    last_synced_at: NOW - 120_000,
    next_attempt_at: null,
    last_failure: null,
    ops_behind: 0,
    cursor: null,
    ...extra,
  });

const PEERS = valid(SyncPeerList, {
  peers: [
    peer(A, 'kitchen'),
    peer(B, 'garage', { url: null, state: 'waiting', direction: null, last_synced_at: null, ops_behind: 17, last_failure: { reason: 'auth', code: 'key_mismatch', message: 'the key fingerprint is not the pinned one', at: NOW - 5000 } }),
    peer(C, 'attic', { state: 'idle', direction: 'inbound', last_synced_at: NOW - 3 * 3600_000 }),
  ],
});

const STATUS_ON = valid(SyncStatus, {
  enabled: true,
  disabled_by: null,
  brain_id: SELF,
  key_fingerprint: 'q'.repeat(43),
  active_peers: 1,
  was_active_recent: true,
  peers: 3,
  last_synced_at: NOW - 120_000,
  ops: { local: 120, total: 340 },
  cursor: { [SELF]: 120 },
  failures: { auth: 2, timeout: 1, io: 0 },
});

const refusal = (code: string, message: string, details: unknown = null) => ({ error: { code, message, details } });

void test('svc sync status: one block when on; a clear single-node line when off (exit 0); --json is the answer on one line', async (t) => {
  let status: SyncStatus = STATUS_ON;
  const brain = await fakeBrain(t, (s) => (s.method === 'GET' && s.url === '/api/sync/status' ? [200, status] : [404, {}]));
  const on = io();
  assert.equal(await syncStatus(brain.conn, on.io, { json: false, now: () => NOW }), 0);
  assert.equal(
    on.text.out,
    [
      'sync: on',
      `brain id: ${SELF}`,
      `key fingerprint: ${'q'.repeat(43)}`,
      'peers: 1 active of 3',
      'last synced: 2 min ago',
      'ops: 120 written here, 340 in all',
      'failures since start: auth 2, timeout 1',
      '',
    ].join('\n'),
  );
  const asJson = io();
  assert.equal(await syncStatus(brain.conn, asJson.io, { json: true }), 0);
  assert.equal(asJson.text.out, `${JSON.stringify(STATUS_ON)}\n`);

  status = valid(SyncStatus, { ...STATUS_ON, enabled: false, disabled_by: 'SVC_SYNC_DISABLED=1', key_fingerprint: null, active_peers: 0, peers: 0, last_synced_at: null, failures: {} });
  const off = io();
  assert.equal(await syncStatus(brain.conn, off.io, { json: false }), 0);
  assert.match(off.text.out, /^sync is off: this brain is single-node \(SVC_SYNC_DISABLED=1\)\n/);
  assert.doesNotMatch(off.text.out, /sync: on/);
});

void test('describeStatus: no peers yet says how to pair; no failures means no failures line; never synced', () => {
  const text = describeStatus({ ...STATUS_ON, peers: 0, active_peers: 0, last_synced_at: null, failures: {} }, NOW);
  assert.match(text, /last synced: never/);
  assert.doesNotMatch(text, /failures/);
  assert.match(text, /no peers yet: run `svc pair --kind brain` on the other brain, then `svc sync pair '<url>'` here/);
});

void test('svc sync peers: a table with the short brain id, state, direction, last synced, ops behind, url, last failure; --json; a refusal is exit 1', async (t) => {
  const brain = await fakeBrain(t, (s) => (s.url === '/api/sync/peers' ? [200, PEERS] : [404, {}]));
  const out = io();
  assert.equal(await syncPeers(brain.conn, out.io, { json: false, now: () => NOW }), 0);
  const lines = out.text.out.trimEnd().split('\n');
  assert.match(lines[0]!, /^BRAIN\s+NAME\s+STATE\s+DIRECTION\s+LAST SYNCED\s+BEHIND\s+URL\s+LAST FAILURE$/);
  assert.match(lines[1]!, /^1b4e28ba\s+kitchen\s+connected\s+outbound\s+2 min ago\s+0\s+ws:\/\/kitchen.local:7420\/sync\s+-$/);
  assert.match(lines[2]!, /^1b4e28bb\s+garage\s+waiting\s+-\s+never\s+17\s+dials in\s+auth \(key_mismatch\)$/);
  assert.match(lines[3]!, /^9c0ffee0\s+attic\s+idle\s+inbound\s+3 h ago\s+0\s/);
  const asJson = io();
  assert.equal(await syncPeers(brain.conn, asJson.io, { json: true }), 0);
  assert.equal(asJson.text.out, `${JSON.stringify(PEERS)}\n`);
  assert.match(describePeers({ peers: [] }, NOW), /^no peers yet/);

  const refused = await fakeBrain(t, () => [401, refusal('UNAUTHORIZED', 'invalid bearer token')]);
  const err = io();
  assert.equal(await syncPeers(refused.conn, err.io, { json: false }), 1);
  assert.match(err.text.err, /^svc: invalid bearer token/);
  assert.equal(err.text.out, '');
});

void test('svc sync pair: posts the URL, PIN and sync URL; prints who it paired with and where it syncs from; --json', async (t) => {
  const paired = peer(A, 'kitchen', { state: 'connecting', direction: null, last_synced_at: null });
  const brain = await fakeBrain(t, (s) => (s.method === 'POST' && s.url === '/api/sync/pair' ? [201, paired] : [404, {}]));
  const url = pairUrl('brain', true);
  const out = io();
  assert.equal(await syncPair(brain.conn, out.io, { url, pin: '1234', syncUrl: 'ws://a.local:7420/sync', json: false }), 0, out.text.err);
  assert.deepEqual(brain.seen[0]!.body, { url, pin: '1234', sync_url: 'ws://a.local:7420/sync' });
  assert.equal(out.text.out, `paired with kitchen (${A}); syncing from ws://kitchen.local:7420/sync\n`);

  const asJson = io();
  assert.equal(await syncPair(brain.conn, asJson.io, { url: pairUrl('brain'), json: true }), 0);
  assert.deepEqual(brain.seen[1]!.body, { url: pairUrl('brain') }, 'no pin or sync_url when not given');
  assert.equal(asJson.text.out, `${JSON.stringify(paired)}\n`);

  const inbound = await fakeBrain(t, () => [201, { ...paired, url: null }]);
  const dialsIn = io();
  assert.equal(await syncPair(inbound.conn, dialsIn.io, { url: pairUrl('brain'), json: false }), 0);
  assert.match(dialsIn.text.out, /; syncing from when it dials in\n$/);
});

void test('svc sync pair refused: 401 PIN required says to add --pin, a wrong PIN how many tries are left, a bad API token its hint; 409 sync disabled; all exit 1', async (t) => {
  const pin = await fakeBrain(t, () => [401, refusal('PIN_REQUIRED', 'this pairing needs the PIN the other brain printed', { pin_required: true })]);
  const needsPin = io();
  assert.equal(await syncPair(pin.conn, needsPin.io, { url: pairUrl('brain', true), json: false }), 1);
  assert.equal(needsPin.text.err, 'svc: this pairing needs the PIN the other brain printed\nfix: run again with --pin and the PIN `svc pair --kind brain --pin` printed on the other brain\n', 'no API-token hint: the 401 is about the PIN');
  assert.equal(needsPin.text.out, '');

  const wrong = await fakeBrain(t, () => [401, refusal('UNAUTHORIZED', 'the other brain (http://192.168.1.20:9090) refused: wrong PIN', { attempts_left: 2, state: 'unclaimed' })]);
  const wrongPin = io();
  assert.equal(await syncPair(wrong.conn, wrongPin.io, { url: pairUrl('brain', true), pin: '9999', json: false }), 1);
  assert.equal(wrongPin.text.err, 'svc: the other brain (http://192.168.1.20:9090) refused: wrong PIN\n2 attempts left before the other brain revokes the pair URL\n');

  const token = await fakeBrain(t, () => [401, refusal('UNAUTHORIZED', 'invalid bearer token')]);
  const badToken = io();
  assert.equal(await syncPair(token.conn, badToken.io, { url: pairUrl('brain'), json: false }), 1);
  assert.match(badToken.text.err, /invalid bearer token \(the token comes from SVC_API_TOKEN/, 'a 401 about the API token keeps its hint');

  const off = await fakeBrain(t, () => [409, refusal('SYNC_DISABLED', 'sync is off on this brain (SVC_SYNC_DISABLED=1)')]);
  const disabled = io();
  assert.equal(await syncPair(off.conn, disabled.io, { url: pairUrl('brain'), json: true }), 1);
  assert.equal(disabled.text.err, 'svc: sync is off on this brain (SVC_SYNC_DISABLED=1)\n');
  assert.equal(disabled.text.out, '', '--json prints nothing on stdout for a refusal');
});

void test('svc sync pair: a URL that is not a brain pair URL, a bad PIN or sync URL is exit 2 before any call', async (t) => {
  const brain = await fakeBrain(t, () => [201, {}]);
  for (const [args, problem] of [
    [{ url: 'https://example.org/pair' }, /not a pair URL \(a pair URL starts with svc:\/\/pair\?\)/],
    [{ url: pairUrl('phone') }, /this pair URL is for a phone; run `svc pair --kind brain`/],
    [{ url: pairUrl('brain'), pin: '12' }, /--pin is the 4 to 8 digits/],
    [{ url: pairUrl('brain'), syncUrl: 'http://a.local/sync' }, /--sync-url is the ws:\/\/ or wss:\/\//],
  ] as const) {
    const out = io();
    assert.equal(await syncPair(brain.conn, out.io, { json: false, ...args }), 2, JSON.stringify(args));
    assert.match(out.text.err, problem);
  }
  assert.equal(brain.seen.length, 0);
  assert.equal(pairProblem({ url: pairUrl('brain'), pin: '12345678', syncUrl: 'wss://a.example/sync', json: false }), undefined);
});

void test('svc sync now: one line per peer; exit 0 when all synced, 1 when one did not; --peer by prefix; --timeout in seconds', async (t) => {
  let result: SyncNowResult = { peers: [{ brain_id: A, outcome: 'synced', sent: 3, received: 5, failure: null }] };
  const brain = await fakeBrain(t, (s) => {
    if (s.url === '/api/sync/peers') return [200, PEERS];
    if (s.method === 'POST' && s.url === '/api/sync/now') return [200, valid(SyncNowResult, result)];
    return [404, {}];
  });
  const ok = io();
  assert.equal(await syncNow(brain.conn, ok.io, { peer: '1B4E28BA', timeout: '2.5', json: false }), 0, ok.text.err);
  assert.deepEqual(brain.seen.at(-1)!.body, { peer: A, timeout_ms: 2500 });
  assert.equal(ok.text.out, 'kitchen: synced, sent 3, received 5\n');

  result = {
    peers: [
      { brain_id: A, outcome: 'synced', sent: 0, received: 0, failure: null },
      { brain_id: B, outcome: 'failed', sent: 1, received: 0, failure: { reason: 'auth', code: 'key_mismatch', message: 'the key fingerprint is not the pinned one', at: NOW } },
      { brain_id: C, outcome: 'timeout', sent: 2, received: 1, failure: null },
    ],
  };
  const partly = io();
  assert.equal(await syncNow(brain.conn, partly.io, { json: false }), 1);
  assert.deepEqual(brain.seen.at(-1)!.body, { timeout_ms: 15_000 });
  assert.equal(
    partly.text.out,
    ['kitchen: synced, sent 0, received 0', 'garage: failed, sent 1, received 0: auth (key_mismatch) the key fingerprint is not the pinned one', 'attic: timeout, sent 2, received 1', ''].join('\n'),
  );
  const asJson = io();
  assert.equal(await syncNow(brain.conn, asJson.io, { json: true }), 1, '--json keeps the exit code');
  assert.equal(asJson.text.out, `${JSON.stringify(result)}\n`);
});

void test('svc sync now refused: 409 sync disabled and 404 unknown peer are exit 1; an ambiguous --peer and a bad --timeout are exit 2', async (t) => {
  const off = await fakeBrain(t, (s) => (s.url === '/api/sync/peers' ? [200, { peers: [] }] : [409, refusal('SYNC_DISABLED', 'sync is off on this brain (SVC_SYNC_DISABLED=1)')]));
  const disabled = io();
  assert.equal(await syncNow(off.conn, disabled.io, { json: false }), 1);
  assert.equal(disabled.text.err, 'svc: sync is off on this brain (SVC_SYNC_DISABLED=1)\n');

  const gone = await fakeBrain(t, (s) => (s.url === '/api/sync/peers' ? [200, PEERS] : [404, refusal('SYNC_UNKNOWN_PEER', 'no peer with that brain id')]));
  const unknown = io();
  assert.equal(await syncNow(gone.conn, unknown.io, { peer: A, json: false }), 1);
  assert.match(unknown.text.err, /no peer with that brain id/);

  const ambiguous = io();
  assert.equal(await syncNow(gone.conn, ambiguous.io, { peer: '1b4e', json: false }), 2);
  assert.match(ambiguous.text.err, /"1b4e" names 2 peers/);
  const posts = gone.seen.filter((s) => s.method === 'POST').length;
  assert.equal(posts, 1, 'the ambiguous prefix made no POST');

  for (const timeout of ['0', '121', 'soon', '1e3', '-1']) assert.equal(await syncNow(gone.conn, io().io, { timeout, json: false }), 2, timeout);
  assert.equal(nowTimeoutMs('120'), 120_000);
  assert.equal(nowTimeoutMs('0.1'), 100);
});

void test('svc sync forget: a unique prefix is resolved and forgotten; ambiguous is exit 2 with the candidates; no match and 404 are exit 1', async (t) => {
  const brain = await fakeBrain(t, (s) => {
    if (s.method === 'GET' && s.url === '/api/sync/peers') return [200, PEERS];
    if (s.method === 'DELETE' && s.url === `/api/sync/peers/${C}`) return [200, { brain_id: C, forgotten: true }];
    if (s.method === 'DELETE') return [404, refusal('SYNC_UNKNOWN_PEER', 'no peer with that brain id')];
    return [404, {}];
  });
  const out = io();
  assert.equal(await syncForget(brain.conn, out.io, { peer: '9c0f', json: false }), 0, out.text.err);
  assert.equal(out.text.out, 'forgot attic: its links are closed and it can no longer sync with this brain; pair again to resume\n');
  const asJson = io();
  assert.equal(await syncForget(brain.conn, asJson.io, { peer: C, json: true }), 0);
  assert.equal(asJson.text.out, `${JSON.stringify({ brain_id: C, forgotten: true })}\n`);

  const deletes = (): number => brain.seen.filter((s) => s.method === 'DELETE').length;
  const before = deletes();
  const ambiguous = io();
  assert.equal(await syncForget(brain.conn, ambiguous.io, { peer: '1b4e28b', json: false }), 2);
  assert.equal(ambiguous.text.err, `svc: "1b4e28b" names 2 peers; give more of the brain id:\n  ${A}  kitchen\n  ${B}  garage\n`);
  const none = io();
  assert.equal(await syncForget(brain.conn, none.io, { peer: 'ffff', json: false }), 1);
  assert.match(none.text.err, /no peer's brain id starts with "ffff"; `svc sync peers` lists them/);
  assert.equal(deletes(), before, 'neither an ambiguous nor an unknown prefix deletes anything');

  const refused = io();
  assert.equal(await syncForget(brain.conn, refused.io, { peer: A, json: false }), 1);
  assert.match(refused.text.err, /no peer with that brain id/);
});

void test('matchPeer: a full id wins even when it prefixes nothing else; an empty prefix names nobody', () => {
  const peers = PEERS.peers;
  assert.deepEqual(matchPeer(peers, A), { peer: peers[0] });
  assert.deepEqual(matchPeer(peers, ` ${C.toUpperCase()} `), { peer: peers[2] });
  assert.deepEqual(matchPeer(peers, ''), { none: true });
  assert.deepEqual(matchPeer(peers, '1b4e28b'), { candidates: [peers[0], peers[1]] });
});
