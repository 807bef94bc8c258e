// The data layer behind a real /sync session: two brains with the real memory service and op log,
// linked by SyncSession over a WebSocket on loopback, exchange everything written on either side —
// before the link and while it is up — and end with identical synced tier tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { readCursor } from '../../../daemon/sync/op-log';
import { RecentNonces } from '../../../sync/link-handshake';
import { SyncSession, type SessionEnd } from '../../../sync/session-link';
import { until } from '../../helpers/poll';
import { directory, newIdentity, pinned } from '../../sync/link-fixtures';
import { syncBrain, syncedTables, type SyncBrain } from './sync-brain';

const opCount = (b: SyncBrain): number => b.mem.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM sync_ops')!.n;

test('over a real session on loopback, two homes end with the same synced tables', async (t) => {
  const idA = newIdentity();
  const idB = newIdentity();
  const a = syncBrain(idA.brainId);
  const b = syncBrain(idB.brainId, { start: 1_750_000_000_000 + 3_600_000 });
  t.after(async () => {
    await a.mem.close();
    await b.mem.close();
  });
  for (let i = 0; i < 40; i++) await a.mem.memory.remember(`Shopping list item number ${i} is oat milk`, { tags: ['home'] });
  for (let i = 0; i < 25; i++) await b.mem.memory.remember(`Cabin chore number ${i} is checking the woodstove`);
  await a.mem.memory.addTriples([{ subject: 'Anna', predicate: 'likes', object: 'green tea', confidence: 0.6 }], 'turn:a');
  await b.mem.memory.addTriples([{ subject: 'Anna', predicate: 'likes', object: 'green tea', confidence: 0.5 }], 'turn:b');

  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  t.after(() => server.close());
  await once(server, 'listening');
  const ends: SessionEnd[] = [];
  server.on('connection', (socket) => {
    const session = new SyncSession({
      identity: idB,
      end: { role: 'responder', peers: directory(pinned(idA)), nonces: new RecentNonces() },
      data: b.data,
      send: (text) => socket.send(text),
      now: Date.now,
      onEnd: (e) => {
        ends.push(e);
        socket.close(e.close);
      },
    });
    socket.on('message', (data, isBinary) => session.receive(data, isBinary));
    socket.on('close', () => session.transportClosed());
  });
  const socket = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/sync`);
  const initiator = new SyncSession({
    identity: idA,
    end: { role: 'initiator', peer: pinned(idB) },
    data: a.data,
    send: (text) => socket.send(text),
    now: Date.now,
    config: { batchBytes: 4 * 1024, window: 2 },
    onEnd: (e) => {
      ends.push(e);
      socket.close(e.close);
    },
  });
  socket.on('message', (data, isBinary) => initiator.receive(data, isBinary));
  socket.on('close', () => initiator.transportClosed());
  await once(socket, 'open');
  initiator.open();

  const converged = (): Promise<true | undefined> => Promise.resolve(opCount(a) === opCount(b) && JSON.stringify(readCursor(a.mem.store)) === JSON.stringify(readCursor(b.mem.store)) ? true : undefined);
  await until(() => `the first sync (a ${opCount(a)} ops, b ${opCount(b)})`, converged);
  // A write while the link is up reaches the peer once the session is told.
  await a.mem.memory.remember('The cabin key is under the blue pot');
  initiator.notify();
  await until(() => 'the write made while linked', () => Promise.resolve(b.mem.store.get("SELECT id FROM memory_notes WHERE text LIKE '%blue pot%'") ? true : undefined));
  await until(() => 'the second sync', converged);
  assert.deepEqual(syncedTables(a), syncedTables(b));
  assert.equal((syncedTables(a).notes ?? []).length, 66);
  initiator.close();
  await once(socket, 'close');
  assert.deepEqual(
    ends.map((e) => e.reason),
    ['normal', 'normal'],
  );
});
