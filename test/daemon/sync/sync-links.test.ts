// daemon/sync/sync-links.ts on real WebSockets: two (or three) brains with the real memory, op log and
// pinned peers, each answering /sync on an HTTP server on loopback the way the brain's route does
// (the hello header judged before the upgrade) and dialling the others. Checked: notes cross both
// ways, one session per peer when both dial at once (the same one on both brains), refusals before the
// upgrade and their metrics, forgetting a peer, reconnecting after a peer was down, and `sync now`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { WebSocketServer } from 'ws';
import { createMetrics, type Metrics } from '../../../daemon/metrics/metrics';
import { SyncLinks, type PeerAddress } from '../../../daemon/sync/sync-links';
import { SyncMetrics } from '../../../daemon/sync/sync-metrics';
import { PeerCursors, sameCursor } from '../../../daemon/sync/peer-cursors';
import { readCursor } from '../../../daemon/sync/op-log';
import { waitForSync } from '../../../daemon/sync/sync-now';
import { SYNC_PEERS_COMPONENT, SYNC_PEERS_MIGRATIONS, SyncPeers } from '../../../daemon/sync/sync-peers';
import { SYNC_HELLO_HEADER } from '../../../protocol/sync-link';
import type { SyncIdentity } from '../../../sync/identity-keys';
import { SyncSession } from '../../../sync/session-link';
import { sampleValue } from '../../helpers/metric-samples';
import { until } from '../../helpers/poll';
import { newIdentity, pinned } from '../../sync/link-fixtures';
import { syncBrain, syncedTables, type SyncBrain } from './sync-brain';

interface Node {
  identity: SyncIdentity;
  brain: SyncBrain;
  peers: SyncPeers;
  links: SyncLinks;
  cursors: PeerCursors;
  metrics: Metrics;
  server: Server;
  url: string;
  /** Where this node dials each peer (a test may take an address away or point it elsewhere). */
  addresses: Map<string, string>;
  close(): Promise<void>;
}

const silent = pino({ level: 'silent' });

async function node(identity = newIdentity()): Promise<Node> {
  const brain = syncBrain(identity.brainId, { start: Date.now() });
  brain.mem.store.migrate(SYNC_PEERS_COMPONENT, SYNC_PEERS_MIGRATIONS);
  const peers = new SyncPeers(brain.mem.store);
  const metrics = createMetrics(true);
  const addresses = new Map<string, string>();
  const cursors = new PeerCursors(brain.mem.store);
  const links = new SyncLinks({
    cursors,
    identity,
    peers,
    data: brain.data,
    now: Date.now,
    logger: silent,
    metrics: new SyncMetrics(metrics.registry, 'sync'),
    address: (peer): PeerAddress | null => {
      const url = addresses.get(peer.brainId);
      return url === undefined ? null : { url, source: 'static' };
    },
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  const server = createServer((_req, res) => res.writeHead(426).end());
  server.on('upgrade', (req, socket, head) => {
    const header = req.headers[SYNC_HELLO_HEADER];
    const verdict = links.upgrade(Array.isArray(header) ? header[0] : header, req.socket.remoteAddress ?? '');
    if (!verdict.ok) {
      const body = JSON.stringify({ error: { code: 'UNAUTHORIZED', message: verdict.message, details: { refusal: verdict.code } } });
      socket.end(`HTTP/1.1 ${verdict.status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => verdict.accept(ws));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/sync`;
  return {
    identity,
    brain,
    peers,
    links,
    cursors,
    metrics,
    server,
    url,
    addresses,
    close: async () => {
      await links.stop();
      server.closeAllConnections();
      server.close();
      wss.close();
      await brain.mem.close();
    },
  };
}

/** Pins each to the other (as pairing would) and, when `dial`, gives `from` the other's address. */
async function pair(x: Node, y: Node, dial: { x?: boolean; y?: boolean } = { x: true }): Promise<void> {
  await x.peers.pin({ brainId: y.identity.brainId, publicKey: y.identity.publicKey, name: 'y', deviceId: 'dev_y', url: null }, Date.now());
  await y.peers.pin({ brainId: x.identity.brainId, publicKey: x.identity.publicKey, name: 'x', deviceId: null, url: null }, Date.now());
  if (dial.x === true) x.addresses.set(y.identity.brainId, y.url);
  if (dial.y === true) y.addresses.set(x.identity.brainId, x.url);
}

const noteTexts = (n: Node): string[] => n.brain.mem.store.all<{ text: string }>('SELECT text FROM memory_notes ORDER BY text').map((r) => r.text);
const failures = (n: Node, reason: string): Promise<number | undefined> => sampleValue(n.metrics, 'svc_sync_failures_total', { reason });

test('a brain dials its peer: notes written before and during the link cross both ways, and sync now says synced', async (t) => {
  const a = await node();
  const b = await node();
  t.after(async () => {
    await a.close();
    await b.close();
  });
  await a.brain.mem.memory.remember('The boiler is serviced in March');
  await b.brain.mem.memory.remember('The cabin key is under the blue pot');
  await pair(a, b);
  a.links.start();
  b.links.start();
  await until(() => 'a session both ways', async () => (a.links.connected(b.identity.brainId) && b.links.connected(a.identity.brainId) ? true : undefined), 10_000);
  assert.equal(a.links.connected(b.identity.brainId)!.direction, 'outbound');
  assert.equal(b.links.connected(a.identity.brainId)!.direction, 'inbound');
  // Written while the link is up: notify() sends it.
  await a.brain.mem.memory.remember('The bins go out on Tuesday');
  a.links.notify();
  const now = await waitForSync({ links: a.links, peers: a.peers.active(), address: () => ({ url: b.url, source: 'static' }), cursor: () => a.brain.data.cursor(), timeoutMs: 10_000 });
  assert.deepEqual(now.peers.map((p) => p.outcome), ['synced']);
  await until(() => `notes on b: ${noteTexts(b).join(' | ')}`, async () => (noteTexts(b).length === 3 ? true : undefined), 10_000);
  assert.deepEqual(syncedTables(a.brain), syncedTables(b.brain));
  assert.equal(await sampleValue(a.metrics, 'svc_sync_active_peers'), 1);
  assert.equal(await sampleValue(b.metrics, 'svc_sync_was_active_recent'), 1);
  assert.notEqual(a.peers.get(b.identity.brainId)!.lastSyncedAt, null);
  // What b holds is kept on a (the ticks save it): tombstone collection and `behind` while apart use it.
  await until(() => 'b\'s cursor saved on a', async () => { const saved = a.cursors.get(b.identity.brainId); return saved !== null && sameCursor(saved, readCursor(b.brain.mem.store)) ? true : undefined; }, 5_000);
});

test('when both brains dial each other at once, both keep the session the lower brain id dialled and close the other', async (t) => {
  const a = await node();
  const b = await node();
  t.after(async () => {
    await a.close();
    await b.close();
  });
  await pair(a, b, { x: true, y: true });
  a.links.start();
  b.links.start();
  const lower = a.identity.brainId < b.identity.brainId ? a : b;
  const higher = lower === a ? b : a;
  await until(
    () => 'one session, dialled by the lower id',
    async () => (lower.links.connected(higher.identity.brainId)?.direction === 'outbound' && higher.links.connected(lower.identity.brainId)?.direction === 'inbound' ? true : undefined),
    15_000,
  );
  await lower.brain.mem.memory.remember('Written on the lower brain');
  await higher.brain.mem.memory.remember('Written on the higher brain');
  lower.links.notify();
  higher.links.notify();
  await until(() => 'both notes on both', async () => (noteTexts(a).length === 2 && noteTexts(b).length === 2 ? true : undefined), 10_000);
  assert.equal(lower.links.activePeers(), 1);
  assert.equal(higher.links.activePeers(), 1);
  assert.equal(await failures(a, 'io'), 0, 'closing the second session is not a failure');
  assert.equal(await failures(b, 'io'), 0);
});

test('before start nobody is answered (503); a hello from a brain never paired is refused 401 before the upgrade and counted as auth; a forgotten peer gets revoked_peer', async (t) => {
  const a = await node();
  const b = await node();
  t.after(async () => {
    await a.close();
    await b.close();
  });
  const stranger = newIdentity();
  const helloFrom = (identity: SyncIdentity, to: Node): string =>
    new SyncSession({ identity, end: { role: 'initiator', peer: pinned(to.identity) }, data: to.brain.data, send: () => undefined, now: Date.now, onEnd: () => undefined }).helloHeader();
  const early = a.links.upgrade(helloFrom(stranger, a), '127.0.0.1');
  assert.deepEqual(early.ok ? null : early.status, 503, 'nobody is answered before the op log is up to date (start)');
  a.links.start();
  const refused = a.links.upgrade(helloFrom(stranger, a), '127.0.0.1');
  assert.equal(refused.ok, false);
  assert.deepEqual(refused.ok ? null : [refused.status, refused.code], [401, 'unknown_peer']);
  assert.equal(await failures(a, 'auth'), 1);

  await pair(b, a);
  b.links.start();
  await until(() => 'linked', async () => (a.links.connected(b.identity.brainId) ? true : undefined), 10_000);
  assert.ok(await a.peers.forget(b.identity.brainId, Date.now()));
  a.links.forgotten(b.identity.brainId);
  await until(() => 'the link is cut', async () => (a.links.connected(b.identity.brainId) === null ? true : undefined), 5_000);
  const again = a.links.upgrade(helloFrom(b.identity, a), '127.0.0.1');
  assert.deepEqual(again.ok ? null : [again.status, again.code], [401, 'revoked_peer']);
  // b keeps dialling and keeps being refused: auth failures on b, its link never comes back.
  await until(() => 'b sees the refusal', async () => ((b.links.lastFailure(a.identity.brainId)?.code ?? '') === 'revoked_peer' ? true : undefined), 10_000);
  assert.equal(b.links.connected(a.identity.brainId), null);
  assert.ok((await failures(b, 'auth'))! >= 1);
});

test('a peer that is down: the dial fails as io and waits its backoff; once the peer is up the link comes back and what was written meanwhile crosses', async (t) => {
  const a = await node();
  const b = await node();
  t.after(async () => {
    await a.close();
    await b.close();
  });
  await pair(a, b);
  // b's address names a port where nothing listens yet.
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const deadPort = (probe.address() as AddressInfo).port;
  probe.close();
  await once(probe, 'close');
  a.addresses.set(b.identity.brainId, `ws://127.0.0.1:${deadPort}/sync`);
  a.links.start();
  await until(() => 'the dial failed', async () => (a.links.lastFailure(b.identity.brainId)?.reason === 'io' ? true : undefined), 10_000);
  const view = a.links.view(a.peers.get(b.identity.brainId)!, () => 0);
  assert.ok(view.state === 'waiting' || view.state === 'connecting', view.state);
  assert.ok((await failures(a, 'io'))! >= 1);
  await a.brain.mem.memory.remember('Written while the peer was down');
  b.links.start();
  a.addresses.set(b.identity.brainId, b.url);
  a.links.dialNow(b.identity.brainId);
  await until(() => 'the note crossed', async () => (noteTexts(b).includes('Written while the peer was down') ? true : undefined), 15_000);
  assert.equal(a.links.connected(b.identity.brainId)?.direction, 'outbound');
});

test('three brains in a chain (a–b–c, no a–c link): what a writes reaches c through b, and back', async (t) => {
  const a = await node();
  const b = await node();
  const c = await node();
  t.after(async () => {
    for (const n of [a, b, c]) await n.close();
  });
  await pair(a, b);
  await pair(c, b);
  for (const n of [a, b, c]) n.links.start();
  await a.brain.mem.memory.remember('From a');
  await c.brain.mem.memory.remember('From c');
  a.links.notify();
  c.links.notify();
  await until(() => `a: ${noteTexts(a).join('|')}; c: ${noteTexts(c).join('|')}`, async () => (noteTexts(a).length === 2 && noteTexts(c).length === 2 && noteTexts(b).length === 2 ? true : undefined), 15_000);
  assert.deepEqual(syncedTables(a.brain), syncedTables(c.brain));
  assert.deepEqual(syncedTables(a.brain), syncedTables(b.brain));
});
