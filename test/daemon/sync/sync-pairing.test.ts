// daemon/sync/sync-pairing.ts between two brains over real loopback HTTP: the minting brain answers
// /api/sync/pair/accept with acceptPairing and /api/devices/pair/verify_pin as the pairing capability
// does; the completing brain runs completePairing against it. Both pin into real SyncPeers on SQLite,
// the pairing claims are an in-memory table following the PairingClaims contract (daemon/kernel/ports.ts).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { AppError } from '../../../daemon/kernel/errors';
import type { PairingClaims, PairingKind } from '../../../daemon/kernel/ports';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { acceptPairing, completePairing, dialBackUrl, type SyncPairingDeps } from '../../../daemon/sync/sync-pairing';
import { SYNC_PEERS_COMPONENT, SYNC_PEERS_MIGRATIONS, SyncPeers, syncUrlOf } from '../../../daemon/sync/sync-peers';
import { encodePairUrl, type PairKind } from '../../../mesh/pair-payload';
import { newPairToken } from '../../../mesh/pair-token';
import { SyncPairAcceptBody } from '../../../protocol/sync-api';
import type { SyncPairResponse } from '../../../protocol/sync-link';
import { generateKeypair, identityOf, keyFingerprint, type SyncIdentity } from '../../../sync/identity-keys';
import { pairRequest, pairResponse } from '../../../sync/identity-pairing';

const silent = pino({ level: 'silent' });
const newIdentity = (brainId: string = randomUUID()): SyncIdentity => identityOf(brainId, generateKeypair());
/** Where the completing brain says it can be dialled back. */
const CABIN_SYNC_URL = 'ws://10.0.0.2:9090/sync';

/** Pairing tokens as the pairing capability keeps them: kind, the name it was minted with, a PIN, claimed or not. */
class MemoryClaims implements PairingClaims {
  readonly tokens = new Map<string, { kind: PairingKind; name?: string; pin?: string; claimed: boolean }>();
  readonly revoked: string[] = [];
  private devices = 0;

  mint(kind: PairingKind, opts: { name?: string; pin?: string } = {}): string {
    const token = newPairToken();
    this.tokens.set(token, { kind, ...opts, claimed: false });
    return token;
  }

  claimed(token: string): boolean {
    return this.tokens.get(token)?.claimed === true;
  }

  claim(token: string, kind: PairingKind, name: string | undefined): Promise<{ deviceId: string; name: string }> {
    const entry = this.tokens.get(token);
    if (entry === undefined) return Promise.reject(new AppError('NOT_FOUND', 'unknown pairing token', { token: 'unknown' }));
    if (entry.claimed) return Promise.reject(new AppError('CONFLICT', 'this pairing token was used already', { state: 'claimed' }));
    if (entry.kind !== kind) return Promise.reject(new AppError('BAD_REQUEST', `this pairing token is for a ${entry.kind}`, { kind: entry.kind }));
    entry.claimed = true;
    return Promise.resolve({ deviceId: `dev_${++this.devices}`, name: entry.name ?? name ?? entry.kind });
  }

  revoke(deviceId: string): Promise<boolean> {
    this.revoked.push(deviceId);
    return Promise.resolve(true);
  }
}

interface Brain {
  identity: SyncIdentity;
  store: SqliteStore;
  peers: SyncPeers;
  deps: SyncPairingDeps;
}

function brain(t: TestContext, name: string, opts: { identity?: SyncIdentity; claims?: PairingClaims; ownSyncUrls?: string[] } = {}): Brain {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sync-pairing-'));
  const store = new SqliteStore(join(dir, 'brain.db'));
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  store.migrate(SYNC_PEERS_COMPONENT, SYNC_PEERS_MIGRATIONS);
  const identity = opts.identity ?? newIdentity();
  const peers = new SyncPeers(store);
  const claims = opts.claims ?? new MemoryClaims();
  return { identity, store, peers, deps: { identity, peers, claims, now: Date.now, logger: silent, ownSyncUrls: () => opts.ownSyncUrls ?? [CABIN_SYNC_URL], name } };
}

interface Answering {
  base: string;
  port: number;
  /** Every request the server received, as `METHOD path`. */
  requests: string[];
}

const acceptCheck = TypeCompiler.Compile(SyncPairAcceptBody);

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

/** An HTTP server on loopback answering pairing as the minting brain does; `answer` replaces its accept. */
async function listen(t: TestContext, handle: (path: string, body: unknown) => Promise<{ status: number; body: unknown }>): Promise<Answering> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    void readJson(req)
      .then((body) => handle(req.url ?? '', body))
      .then(
        (answer) => send(res, answer.status, answer.body),
        (err: unknown) => {
          if (!(err instanceof AppError)) throw err;
          send(res, err.status, { error: { code: err.code, message: err.message, details: err.details } });
        },
      );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  return { base: `http://127.0.0.1:${port}`, port, requests };
}

/** The minting brain's two public pairing routes; PINs come from its MemoryClaims. */
function minting(t: TestContext, house: Brain, claims: MemoryClaims): Promise<Answering> {
  return listen(t, async (path, body) => {
    if (path === '/api/devices/pair/verify_pin') {
      const { token, pin } = body as { token: string; pin: string };
      if (claims.tokens.get(token)?.pin !== pin) throw new AppError('UNAUTHORIZED', 'wrong PIN', { pin: 'wrong' });
      return { status: 200, body: { verified: true } };
    }
    if (path === '/api/sync/pair/accept') {
      if (!acceptCheck.Check(body)) throw new AppError('BAD_REQUEST', 'not an accept body');
      return { status: 201, body: await acceptPairing(house.deps, body) };
    }
    throw new AppError('NOT_FOUND', `no route ${path}`);
  });
}

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function pairUrl(brainId: string, token: string, urls: string[], opts: { kind?: PairKind; pin?: boolean; expiresAt?: number; key?: string } = {}): string {
  return encodePairUrl({
    v: 1,
    kind: opts.kind ?? 'brain',
    brain_id: brainId,
    token,
    expires_at: opts.expiresAt ?? Math.floor(Date.now() / 1000) + 600,
    pin_required: opts.pin ?? false,
    urls,
    mdns: null,
    ...(opts.key === undefined ? {} : { key: opts.key }),
  });
}

/** Awaits `promise`, which must fail with an AppError of this status and code (and details containing `details`). */
async function refused(promise: Promise<unknown>, expected: { status: number; code: string; details?: Record<string, unknown> }): Promise<AppError> {
  const err = await promise.then(
    () => assert.fail(`expected ${expected.status} ${expected.code}, it succeeded`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof AppError, `an AppError, got ${String(err)}`);
  assert.equal(err.status, expected.status, err.message);
  assert.equal(err.code, expected.code, err.message);
  if (expected.details !== undefined) assert.deepEqual({ ...(err.details as object), ...expected.details }, err.details, `details ${JSON.stringify(err.details)}`);
  return err;
}

/** A house (minting) and a cabin (completing) brain, the house answering on loopback. */
async function twoBrains(t: TestContext): Promise<{ house: Brain; cabin: Brain; claims: MemoryClaims; server: Answering }> {
  const claims = new MemoryClaims();
  const house = brain(t, 'house', { claims });
  const cabin = brain(t, 'cabin');
  return { house, cabin, claims, server: await minting(t, house, claims) };
}

void test('a pairing pins both sides: keys, names, the device id on the minting side only, and where each dials the other', async (t) => {
  const { house, cabin, claims, server } = await twoBrains(t);
  const token = claims.mint('brain');
  const record = await completePairing(cabin.deps, { url: pairUrl(house.identity.brainId, token, [server.base]) });

  assert.deepEqual(server.requests, ['POST /api/sync/pair/accept'], 'no PIN asked, so none verified');
  assert.equal(claims.claimed(token), true);
  const onCabin = cabin.peers.get(house.identity.brainId);
  assert.deepEqual(record, onCabin);
  assert.equal(onCabin?.publicKey, house.identity.publicKey);
  assert.equal(onCabin?.name, 'house');
  assert.equal(onCabin?.deviceId, null, 'the completing side has no device of the pairing');
  assert.equal(onCabin?.url, `ws://127.0.0.1:${server.port}/sync`);
  assert.equal(onCabin?.forgottenAt, null);

  const onHouse = house.peers.get(cabin.identity.brainId);
  assert.equal(onHouse?.publicKey, cabin.identity.publicKey);
  assert.equal(onHouse?.name, 'cabin');
  assert.equal(onHouse?.deviceId, 'dev_1');
  assert.equal(onHouse?.url, CABIN_SYNC_URL);
  assert.deepEqual(house.peers.peer(cabin.identity.brainId), { brainId: cabin.identity.brainId, publicKey: cabin.identity.publicKey, revoked: false }, 'the handshake finds the cabin');
  assert.deepEqual(cabin.peers.peer(house.identity.brainId), { brainId: house.identity.brainId, publicKey: house.identity.publicKey, revoked: false }, 'the handshake finds the house');
});

void test('sync_url replaces the URL derived from the pair URL; a token minted with a name names the peer on the minting side', async (t) => {
  const { house, cabin, claims, server } = await twoBrains(t);
  const token = claims.mint('brain', { name: 'the cabin' });
  const record = await completePairing(cabin.deps, { url: pairUrl(house.identity.brainId, token, [server.base]), sync_url: 'wss://house.example:8443/sync' });
  assert.equal(record.url, 'wss://house.example:8443/sync');
  assert.equal(house.peers.get(cabin.identity.brainId)?.name, 'the cabin');
  assert.equal(syncUrlOf('https://house.example:8443/base?x=1#y'), 'wss://house.example:8443/sync');
});

void test('a request whose proof does not verify is refused 401 and does not use up the token', async (t) => {
  const { house, cabin, claims, server } = await twoBrains(t);
  const token = claims.mint('brain');
  const honest = pairRequest(cabin.identity, token, 'cabin');
  // The cabin's id and proof with another key: the proof does not verify with the key sent.
  const forged = { ...honest, public_key: newIdentity().publicKey };
  const answer = await fetch(`${server.base}/api/sync/pair/accept`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(forged) });
  assert.equal(answer.status, 401);
  const body = (await answer.json()) as { error: { code: string; details: unknown } };
  assert.equal(body.error.code, 'UNAUTHORIZED');
  assert.deepEqual(body.error.details, { proof: 'invalid' });
  // A proof over another token does not verify either.
  await refused(acceptPairing(house.deps, { ...honest, proof: pairRequest(cabin.identity, newPairToken()).proof }), { status: 401, code: 'UNAUTHORIZED' });
  assert.equal(claims.claimed(token), false, 'the token is not claimed');
  assert.deepEqual(house.peers.list(), [], 'nothing pinned');

  const record = await completePairing(cabin.deps, { url: pairUrl(house.identity.brainId, token, [server.base]) });
  assert.equal(record.brainId, house.identity.brainId, 'the same token still pairs the honest brain');
  assert.equal(claims.claimed(token), true);
});

void test('the minting side refuses a request from itself (400) and relays the claims\' refusals: a used token 409, an unknown one 404, one of another kind 400', async (t) => {
  const { house, cabin, claims } = await twoBrains(t);
  await refused(acceptPairing(house.deps, pairRequest(house.identity, claims.mint('brain'))), { status: 400, code: 'BAD_REQUEST' });
  const token = claims.mint('brain');
  await acceptPairing(house.deps, pairRequest(cabin.identity, token, 'cabin'));
  await refused(acceptPairing(house.deps, pairRequest(newIdentity(), token)), { status: 409, code: 'CONFLICT' });
  await refused(acceptPairing(house.deps, pairRequest(newIdentity(), newPairToken())), { status: 404, code: 'NOT_FOUND' });
  const phone = claims.mint('phone');
  await refused(acceptPairing(house.deps, pairRequest(newIdentity(), phone)), { status: 400, code: 'BAD_REQUEST' });
  assert.equal(claims.claimed(phone), false);
  assert.deepEqual(house.peers.list().map((p) => p.brainId), [cabin.identity.brainId], 'only the first request pinned');
});

void test('a pair URL for a phone, one minted by this brain, or not a pair URL is refused before any request (expiry is the minting brain\'s to judge)', async (t) => {
  const { house, cabin, claims, server } = await twoBrains(t);
  await refused(completePairing(cabin.deps, { url: pairUrl(house.identity.brainId, claims.mint('phone'), [server.base], { kind: 'phone' }) }), { status: 400, code: 'BAD_REQUEST', details: { kind: 'phone' } });
  await refused(completePairing(cabin.deps, { url: pairUrl(cabin.identity.brainId, claims.mint('brain'), [server.base]) }), { status: 400, code: 'BAD_REQUEST', details: { brain_id: cabin.identity.brainId } });
  await refused(completePairing(cabin.deps, { url: 'svc://pair?v=1&kind=brain' }), { status: 400, code: 'BAD_REQUEST', details: { url: 'invalid' } });
  assert.deepEqual(server.requests, []);
  assert.deepEqual(cabin.peers.list(), []);
});

void test('a token that needs a PIN: none given is a 401 without any request; a wrong one is the other brain\'s 401; the right one pairs', async (t) => {
  const { house, cabin, claims, server } = await twoBrains(t);
  const token = claims.mint('brain', { pin: '482913' });
  const url = pairUrl(house.identity.brainId, token, [server.base], { pin: true });

  const missing = await refused(completePairing(cabin.deps, { url }), { status: 401, code: 'UNAUTHORIZED' });
  assert.deepEqual(missing.details, { pin_required: true });
  assert.deepEqual(server.requests, [], 'no request sent without the PIN');

  const wrong = await refused(completePairing(cabin.deps, { url, pin: '000000' }), { status: 401, code: 'UNAUTHORIZED' });
  assert.deepEqual(wrong.details, { pin: 'wrong' }, 'the other brain\'s details are relayed');
  assert.match(wrong.message, /wrong PIN/);
  assert.match(wrong.message, new RegExp(server.base.replace(/\./g, '\\.')));
  assert.deepEqual(server.requests, ['POST /api/devices/pair/verify_pin'], 'a wrong PIN stops before the request');
  assert.equal(claims.claimed(token), false);
  assert.deepEqual(cabin.peers.list(), []);

  const record = await completePairing(cabin.deps, { url, pin: '482913' });
  assert.equal(record.publicKey, house.identity.publicKey);
  assert.deepEqual(server.requests.slice(1), ['POST /api/devices/pair/verify_pin', 'POST /api/sync/pair/accept']);
});

void test('an address that does not answer is skipped for the next; when none answers, 502 PEER_UNREACHABLE names them all', async (t) => {
  const { house, cabin, claims, server } = await twoBrains(t);
  const dead = `http://127.0.0.1:${await closedPort()}`;
  const record = await completePairing(cabin.deps, { url: pairUrl(house.identity.brainId, claims.mint('brain'), [dead, server.base]) });
  assert.equal(record.url, `ws://127.0.0.1:${server.port}/sync`, 'the URL of the address that answered');
  assert.equal(house.peers.get(cabin.identity.brainId)?.publicKey, cabin.identity.publicKey);

  const other = `http://127.0.0.1:${await closedPort()}`;
  const token = claims.mint('brain');
  const err = await refused(completePairing(cabin.deps, { url: pairUrl(house.identity.brainId, token, [dead, other]) }), { status: 502, code: 'PEER_UNREACHABLE' });
  assert.deepEqual(err.details, { urls: [dead, other] });
  assert.ok(err.message.includes(dead) && err.message.includes(other), err.message);
  assert.equal(claims.claimed(token), false);
});

void test('an answer that does not prove it is the brain the URL named is refused 502 PEER_REFUSED and pins nothing', async (t) => {
  const house = newIdentity();
  const impostor = newIdentity();
  const cabin = brain(t, 'cabin');
  const answers: Record<string, (accept: SyncPairAcceptBody) => unknown> = {
    // The house's id and key, signed by another key.
    'signed by another key': (req) => ({ ...pairResponse(house, req, 'dev_1', 'house'), proof: pairResponse(impostor, req, 'dev_1', 'house').proof }),
    // A whole answer made by another brain.
    'made by another brain': (req) => pairResponse(impostor, req, 'dev_1', 'house'),
    // The house's own answer, but to another request (a stale or spliced answer).
    'to another request': (req) => pairResponse(house, { ...req, token: newPairToken() }, 'dev_1', 'house'),
    'not an answer at all': () => ({ ok: true }),
  };
  for (const [what, answer] of Object.entries(answers)) {
    const server = await listen(t, (_path, body) => Promise.resolve({ status: 201, body: answer(body as SyncPairAcceptBody) }));
    const err = await refused(completePairing(cabin.deps, { url: pairUrl(house.brainId, newPairToken(), [server.base]) }), { status: 502, code: 'PEER_REFUSED' });
    assert.deepEqual(err.details, { url: server.base }, what);
    assert.deepEqual(server.requests, ['POST /api/sync/pair/accept'], what);
  }
  assert.deepEqual(cabin.peers.list(), [], 'nothing pinned');

  // The same server answering honestly pairs: the refusals above were for the answers alone.
  const server = await listen(t, (_path, body) => Promise.resolve({ status: 201, body: pairResponse(house, body as SyncPairAcceptBody, 'dev_1', 'house') satisfies SyncPairResponse }));
  assert.equal((await completePairing(cabin.deps, { url: pairUrl(house.brainId, newPairToken(), [server.base]) })).publicKey, house.publicKey);
});

void test('pairing again after both sides forgot brings the peer back, with a fresh device id', async (t) => {
  const { house, cabin, claims, server } = await twoBrains(t);
  await completePairing(cabin.deps, { url: pairUrl(house.identity.brainId, claims.mint('brain'), [server.base]) });
  assert.equal(await house.peers.forget(cabin.identity.brainId, Date.now()), true);
  assert.equal(await cabin.peers.forget(house.identity.brainId, Date.now()), true);
  assert.equal(house.peers.peer(cabin.identity.brainId)?.revoked, true);
  assert.deepEqual(house.peers.active(), []);

  const again = await completePairing(cabin.deps, { url: pairUrl(house.identity.brainId, claims.mint('brain'), [server.base]) });
  assert.equal(again.forgottenAt, null);
  assert.deepEqual(cabin.peers.active().map((p) => p.brainId), [house.identity.brainId]);
  assert.deepEqual(house.peers.active().map((p) => [p.brainId, p.deviceId]), [[cabin.identity.brainId, 'dev_2']]);
  assert.equal(house.peers.peer(cabin.identity.brainId)?.revoked, false);
  assert.equal(cabin.peers.peer(house.identity.brainId)?.revoked, false);
  // What a restart reads back from brain.db.
  assert.equal(new SyncPeers(house.store).peer(cabin.identity.brainId)?.revoked, false, 'the house still knows the cabin after a restart');
  assert.equal(new SyncPeers(cabin.store).peer(house.identity.brainId)?.revoked, false, 'the cabin still knows the house after a restart');
});

void test('the other brain\'s answer is read only up to its bound (64 KiB), not whatever size a server sends', { timeout: 30_000 }, async (t) => {
  const house = newIdentity();
  const cabin = brain(t, 'cabin');
  const TOTAL = 128 * 1024 * 1024;
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let written = 0;
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(201, { 'content-type': 'application/json' });
    let closed = false;
    res.once('close', () => void (closed = true));
    void (async () => {
      while (written < TOTAL && !closed) {
        written += chunk.length;
        if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      }
      if (!closed) res.end();
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await refused(completePairing(cabin.deps, { url: pairUrl(house.brainId, newPairToken(), [base]) }), { status: 502, code: 'PEER_REFUSED' });
  // Socket buffers hold a few MiB between the two ends; a reader that stops at its bound leaves the rest unsent.
  assert.ok(written < TOTAL / 4, `the server sent ${(written / 1024 / 1024).toFixed(1)} MiB of a ${TOTAL / 1024 / 1024} MiB answer: it was read to the end`);
  assert.deepEqual(cabin.peers.list(), []);
});

void test('a pair URL naming the minting brain\'s key: an impostor answering at its address with the house\'s id and its own key is refused; the house itself pairs', async (t) => {
  const house = newIdentity();
  const impostor = identityOf(house.brainId, generateKeypair());
  const cabin = brain(t, 'cabin');
  const fake = await listen(t, (_path, body) => Promise.resolve({ status: 201, body: pairResponse(impostor, body as SyncPairAcceptBody, 'dev_1', 'house') }));
  const err = await refused(completePairing(cabin.deps, { url: pairUrl(house.brainId, newPairToken(), [fake.base], { key: keyFingerprint(house.publicKey) }) }), { status: 502, code: 'PEER_REFUSED' });
  assert.match(err.message, /sync key other than the one the pair URL names/);
  assert.deepEqual(cabin.peers.list(), [], 'nothing pinned');
  // Without the key in the URL the same impostor would be believed: the fingerprint is what stops it.
  const tofu = await completePairing(cabin.deps, { url: pairUrl(house.brainId, newPairToken(), [fake.base]) });
  assert.equal(tofu.publicKey, impostor.publicKey);
  await cabin.peers.forget(house.brainId, Date.now());

  const real = await listen(t, (_path, body) => Promise.resolve({ status: 201, body: pairResponse(house, body as SyncPairAcceptBody, 'dev_1', 'house') }));
  const record = await completePairing(cabin.deps, { url: pairUrl(house.brainId, newPairToken(), [real.base], { key: keyFingerprint(house.publicKey) }) });
  assert.equal(record.publicKey, house.publicKey);
});

void test('the minting brain dials back on the offered URL of the address the request came from, else the first', () => {
  const urls = ['ws://10.1.0.2:9090/sync', 'ws://192.168.7.20:9090/sync', 'ws://[fd00::20]:9090/sync'];
  assert.equal(dialBackUrl(urls, '192.168.7.20'), 'ws://192.168.7.20:9090/sync');
  assert.equal(dialBackUrl(urls, '::ffff:192.168.7.20'), 'ws://192.168.7.20:9090/sync', 'an IPv4 caller on a dual-stack socket');
  assert.equal(dialBackUrl(urls, 'fd00::20'), 'ws://[fd00::20]:9090/sync');
  assert.equal(dialBackUrl(urls, '172.16.0.9'), 'ws://10.1.0.2:9090/sync', 'from elsewhere (a proxy): the first');
  assert.equal(dialBackUrl(urls, undefined), 'ws://10.1.0.2:9090/sync');
  assert.equal(dialBackUrl([], '192.168.7.20'), null);
});
