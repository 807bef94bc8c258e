// daemon/sync/sync-routes.ts in the real app (buildApp) with a SyncService written here: the shapes and
// statuses of status, peers, pair, accept, now and forget, who may call them (accept is public, the
// rest need the API token), 400 for a body with a property it does not name, 409 when sync is off;
// and /sync on a listening app with a real `ws` client: a refused upgrade is an HTTP status with an
// error envelope, an accepted one hands its socket over, a plain GET is told to upgrade (426).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Value } from '@sinclair/typebox/value';
import type { FastifyPluginAsync } from 'fastify';
import { WebSocket } from 'ws';
import type { UpgradeVerdict } from '../../../daemon/sync/sync-links';
import { syncOff, syncRoutes, syncSocketRoute, type SyncService } from '../../../daemon/sync/sync-routes';
import { newPairToken } from '../../../mesh/pair-token';
import { ErrorEnvelope } from '../../../protocol/errors';
import { SyncPeerList, SyncPeerView, SyncStatus, type SyncNowResult } from '../../../protocol/sync-api';
import { SYNC_HELLO_HEADER, SyncPairResponse } from '../../../protocol/sync-link';
import { generateKeypair, identityOf, keyFingerprint } from '../../../sync/identity-keys';
import { pairRequest, pairResponse } from '../../../sync/identity-pairing';
import { auth, testApp } from '../../helpers/app';

const house = identityOf(randomUUID(), generateKeypair());
const cabin = identityOf(randomUUID(), generateKeypair());
const T0 = 1_764_000_000_000;

const STATUS: SyncStatus = {
  enabled: true,
  disabled_by: null,
  brain_id: house.brainId,
  key_fingerprint: keyFingerprint(house.publicKey),
  active_peers: 1,
  was_active_recent: true,
  peers: 1,
  last_synced_at: T0,
  ops: { local: 2, total: 3 },
  cursor: { [house.brainId]: 2, [cabin.brainId]: 1 },
  failures: { auth: 0, protocol: 1 },
};
const PEER: SyncPeerView = {
  brain_id: cabin.brainId,
  name: 'cabin',
  device_id: 'dev_1',
  url: 'ws://10.0.0.2:9090/sync',
  source: 'paired',
  state: 'connected',
  direction: 'inbound',
  paired_at: T0,
  last_synced_at: T0,
  next_attempt_at: null,
  last_failure: null,
  ops_behind: 0,
  cursor: { [house.brainId]: 2 },
};
const NOW: SyncNowResult = { peers: [{ brain_id: cabin.brainId, outcome: 'synced', sent: 2, received: 1, failure: null }] };

/** The routes' port, answering as a brain with one peer; each call is recorded, and `off` makes it a single-node brain. */
function service(opts: { off?: boolean } = {}): SyncService & { calls: [string, unknown][] } {
  const calls: [string, unknown][] = [];
  const call = <T>(name: string, arg: unknown, answer: () => T): Promise<T> => {
    calls.push([name, arg]);
    return opts.off && name !== 'status' && name !== 'peers' ? Promise.reject(syncOff('settings sync.enabled=false')) : Promise.resolve(answer());
  };
  return {
    calls,
    status: () => call('status', undefined, () => STATUS),
    peers: () => call('peers', undefined, () => [PEER]),
    pair: (body) => call('pair', body, () => PEER),
    accept: (body) => call('accept', body, () => pairResponse(house, body, 'dev_1', 'house')),
    now: (body) => call('now', body, () => NOW),
    forget: (id) => call('forget', id, () => id === cabin.brainId),
  };
}

async function app(t: TestContext, sync = service()): Promise<{ app: Awaited<ReturnType<typeof testApp>>['app']; sync: ReturnType<typeof service> }> {
  const built = await testApp({ routes: [syncRoutes(sync) as unknown as FastifyPluginAsync] });
  t.after(() => built.app.close());
  return { app: built.app, sync };
}

const pairUrl = `svc://pair?v=1&kind=brain&brain=${house.brainId}&token=${newPairToken()}&exp=1999999999&pin=0&url=http%3A%2F%2F10.0.0.1%3A9090`;
const acceptBody = () => ({ ...pairRequest(cabin, newPairToken(), 'cabin'), urls: ['ws://10.0.0.2:9090/sync'] });

function envelope(body: unknown, code: string): ErrorEnvelope['error'] {
  if (!Value.Check(ErrorEnvelope, body)) assert.fail(`an error envelope: ${JSON.stringify(body)}`);
  assert.equal(body.error.code, code, body.error.message);
  return body.error;
}

void test('status and peers answer 200 with their shapes', async (t) => {
  const { app: a } = await app(t);
  const status = await a.inject({ method: 'GET', url: '/api/sync/status', headers: auth });
  assert.equal(status.statusCode, 200);
  assert.deepEqual(status.json(), STATUS);
  assert.ok(Value.Check(SyncStatus, status.json()));
  const peers = await a.inject({ method: 'GET', url: '/api/sync/peers', headers: auth });
  assert.equal(peers.statusCode, 200);
  assert.deepEqual(peers.json(), { peers: [PEER] });
  assert.ok(Value.Check(SyncPeerList, peers.json()));
});

void test('POST /api/sync/pair hands the body to the service and answers 201 with the peer; now answers 200 with its result', async (t) => {
  const { app: a, sync } = await app(t);
  const body = { url: pairUrl, pin: '1234', sync_url: 'ws://10.0.0.1:9090/sync' };
  const paired = await a.inject({ method: 'POST', url: '/api/sync/pair', headers: auth, payload: body });
  assert.equal(paired.statusCode, 201, paired.body);
  assert.deepEqual(paired.json(), PEER);
  assert.ok(Value.Check(SyncPeerView, paired.json()));
  const now = await a.inject({ method: 'POST', url: '/api/sync/now', headers: auth, payload: { peer: cabin.brainId, timeout_ms: 500 } });
  assert.equal(now.statusCode, 200, now.body);
  assert.deepEqual(now.json(), NOW);
  const bare = await a.inject({ method: 'POST', url: '/api/sync/now', headers: auth });
  assert.equal(bare.statusCode, 200, 'now takes no body');
  assert.deepEqual(sync.calls.slice(0, 2), [['pair', body], ['now', { peer: cabin.brainId, timeout_ms: 500 }]]);
  assert.equal(sync.calls[2]?.[0], 'now');
});

void test('accept is public: without any token it answers 201 with a pairing answer', async (t) => {
  const { app: a, sync } = await app(t);
  const body = acceptBody();
  const accepted = await a.inject({ method: 'POST', url: '/api/sync/pair/accept', payload: body });
  assert.equal(accepted.statusCode, 201, accepted.body);
  assert.ok(Value.Check(SyncPairResponse, accepted.json()));
  assert.deepEqual(accepted.json(), pairResponse(house, body, 'dev_1', 'house'));
  assert.deepEqual(sync.calls, [['accept', body]]);
});

void test('every other route needs the API token: 401 without it, and the service is never asked', async (t) => {
  const { app: a, sync } = await app(t);
  const routes = [
    ['GET', '/api/sync/status', undefined],
    ['GET', '/api/sync/peers', undefined],
    ['POST', '/api/sync/pair', { url: pairUrl }],
    ['POST', '/api/sync/now', {}],
    ['DELETE', `/api/sync/peers/${cabin.brainId}`, undefined],
  ] as const;
  for (const [method, url, payload] of routes) {
    for (const headers of [{}, { authorization: 'Bearer not-the-token' }]) {
      const res = await a.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
      assert.equal(res.statusCode, 401, `${method} ${url} ${JSON.stringify(headers)}`);
      envelope(res.json(), 'UNAUTHORIZED');
    }
  }
  assert.deepEqual(sync.calls, []);
});

void test('DELETE forgets a paired peer (200) and answers 404 in the envelope for one that is not; a param that is not a brain id is a 400', async (t) => {
  const { app: a, sync } = await app(t);
  const forgotten = await a.inject({ method: 'DELETE', url: `/api/sync/peers/${cabin.brainId}`, headers: auth });
  assert.equal(forgotten.statusCode, 200);
  assert.deepEqual(forgotten.json(), { brain_id: cabin.brainId, forgotten: true });
  const stranger = randomUUID();
  const unknown = await a.inject({ method: 'DELETE', url: `/api/sync/peers/${stranger}`, headers: auth });
  assert.equal(unknown.statusCode, 404);
  assert.deepEqual(envelope(unknown.json(), 'NOT_FOUND').details, { brain_id: stranger });
  const bad = await a.inject({ method: 'DELETE', url: '/api/sync/peers/cabin', headers: auth });
  assert.equal(bad.statusCode, 400);
  envelope(bad.json(), 'BAD_REQUEST');
  assert.deepEqual(sync.calls, [['forget', cabin.brainId], ['forget', stranger]]);
});

void test('a body with a property the schema does not name is a 400, before the service is asked', async (t) => {
  const { app: a, sync } = await app(t);
  const cases = [
    ['/api/sync/pair', { url: pairUrl, force: true }, auth],
    ['/api/sync/pair/accept', { ...acceptBody(), device_key: 'svcdk_x' }, {}],
    ['/api/sync/now', { timeout_ms: 500, all: true }, auth],
    ['/api/sync/pair', { url: pairUrl, pin: '123' }, auth],
    ['/api/sync/now', { timeout_ms: 50 }, auth],
  ] as const;
  for (const [url, payload, headers] of cases) {
    const res = await a.inject({ method: 'POST', url, headers, payload });
    assert.equal(res.statusCode, 400, `${url} ${JSON.stringify(payload)}: ${res.body}`);
    envelope(res.json(), 'BAD_REQUEST');
  }
  assert.deepEqual(sync.calls, []);
});

void test('with sync off, what would sync is a 409 saying so; status and peers still answer', async (t) => {
  const { app: a } = await app(t, service({ off: true }));
  const cases = [
    ['POST', '/api/sync/pair', auth, { url: pairUrl }],
    ['POST', '/api/sync/pair/accept', {}, acceptBody()],
    ['POST', '/api/sync/now', auth, {}],
    ['DELETE', `/api/sync/peers/${cabin.brainId}`, auth, undefined],
  ] as const;
  for (const [method, url, headers, payload] of cases) {
    const res = await a.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
    assert.equal(res.statusCode, 409, `${method} ${url}: ${res.body}`);
    assert.deepEqual(envelope(res.json(), 'CONFLICT').details, { sync: 'disabled', disabled_by: 'settings sync.enabled=false' });
  }
  assert.equal((await a.inject({ method: 'GET', url: '/api/sync/status', headers: auth })).statusCode, 200);
  assert.equal((await a.inject({ method: 'GET', url: '/api/sync/peers', headers: auth })).statusCode, 200);
});

// ── /sync ────────────────────────────────────────────────────────────────────────────────────────

interface SocketRig {
  url: string;
  base: string;
  /** What the route asked the links: the hello header and the remote address. */
  asked: [string | undefined, string][];
  accepted: WebSocket[];
}

async function socketRig(t: TestContext, verdict: (accept: (socket: WebSocket) => void) => UpgradeVerdict): Promise<SocketRig> {
  const asked: [string | undefined, string][] = [];
  const accepted: WebSocket[] = [];
  const { app: a } = await testApp({
    sockets: [
      syncSocketRoute((header, remote) => {
        asked.push([header, remote]);
        return verdict((socket) => accepted.push(socket));
      }) as unknown as FastifyPluginAsync,
    ],
  });
  await a.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => a.close());
  const address = a.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `ws://127.0.0.1:${port}/sync`, base: `http://127.0.0.1:${port}`, asked, accepted };
}

/** Dials /sync; resolves with the open socket, or the refusal's HTTP status and body. */
function dial(t: TestContext, url: string, hello?: string): Promise<{ ws: WebSocket } | { status: number; body: unknown }> {
  const ws = new WebSocket(url, { headers: hello === undefined ? {} : { [SYNC_HELLO_HEADER]: hello } });
  t.after(() => ws.terminate());
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (req, res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
      });
    });
    ws.once('error', reject);
  });
}

void test('/sync: a refused upgrade is its HTTP status with an error envelope naming the refusal, and no socket', async (t) => {
  const refusals: UpgradeVerdict[] = [
    { ok: false, status: 401, code: 'unknown_peer', message: 'this brain never paired with that brain' },
    { ok: false, status: 503, code: 'io', message: 'this brain is still bringing its op log up to date' },
  ];
  let next = 0;
  const rig = await socketRig(t, () => refusals[next++]!);
  const unknown = await dial(t, rig.url, 'aGVsbG8');
  assert.ok('status' in unknown, 'refused before the upgrade');
  assert.equal(unknown.status, 401);
  const error = envelope(unknown.body, 'UNAUTHORIZED');
  assert.deepEqual(error.details, { refusal: 'unknown_peer' });
  assert.equal(error.message, 'this brain never paired with that brain');

  const starting = await dial(t, rig.url);
  assert.ok('status' in starting);
  assert.equal(starting.status, 503);
  assert.deepEqual(envelope(starting.body, 'SYNC_REFUSED').details, { refusal: 'io' });

  assert.deepEqual(rig.asked, [['aGVsbG8', '127.0.0.1'], [undefined, '127.0.0.1']], 'the hello header and the remote address reach the verdict');
  assert.deepEqual(rig.accepted, []);
});

void test('/sync: an accepted upgrade (no API token needed) hands its socket to accept, and frames flow both ways', async (t) => {
  const rig = await socketRig(t, (accept) => ({ ok: true, accept }));
  const dialled = await dial(t, rig.url, 'aGVsbG8');
  assert.ok('ws' in dialled, 'upgraded');
  assert.equal(rig.accepted.length, 1);
  const server = rig.accepted[0]!;
  const toServer = once(server, 'message');
  dialled.ws.send('{"type":"hello"}');
  assert.equal(String((await toServer)[0]), '{"type":"hello"}');
  const toClient = once(dialled.ws, 'message');
  server.send('{"type":"challenge"}');
  assert.equal(String((await toClient)[0]), '{"type":"challenge"}');
  assert.deepEqual(rig.asked, [['aGVsbG8', '127.0.0.1']]);
});

void test('/sync: a plain GET is told to upgrade (426), and no socket is handed over', async (t) => {
  const rig = await socketRig(t, (accept) => ({ ok: true, accept }));
  const res = await fetch(`${rig.base}/sync`);
  assert.equal(res.status, 426);
  envelope(await res.json(), 'UPGRADE_REQUIRED');
  assert.equal(rig.accepted.length, 0);
});
