// NodeConnection on a real loopback ws pair: the flood window (fast-check against a model), the 1004
// notice throttle, and the action requests waiting for responses (cap, duplicate ids, settle, fail).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { WebSocket, WebSocketServer } from 'ws';
import { FLOOD_CLOSE_FACTOR, MAX_PENDING_PER_NODE, NodeBusy, NodeConnection } from '../../../../daemon/hardware/links/node-connection';
import { NodeUnreachable } from '../../../../daemon/hardware/links/node-links';

async function pair(t: TestContext): Promise<{ server: WebSocket; client: WebSocket; received: { type: string; payload: Record<string, unknown> }[] }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const address = wss.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const accepted = new Promise<WebSocket>((resolve) => wss.once('connection', (s) => resolve(s)));
  const client = new WebSocket(`ws://127.0.0.1:${port}`);
  const received: { type: string; payload: Record<string, unknown> }[] = [];
  client.on('message', (d: Buffer) => received.push(JSON.parse(d.toString('utf8')) as { type: string; payload: Record<string, unknown> }));
  await new Promise((resolve) => client.once('open', resolve));
  const server = await accepted;
  t.after(async () => {
    client.terminate();
    await new Promise((resolve) => wss.close(resolve));
  });
  return { server, client, received };
}

const fixedClock = { now: () => 1000 };

void test('property: per window at most `frames` pass; close only past 10× the limit; a new window starts fresh', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 500 }), fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 400 }), (frames, perMs, gaps) => {
      const conn = new NodeConnection({} as WebSocket, 'n', fixedClock, { frames, perMs });
      let now = 0;
      let windowStart = Number.NEGATIVE_INFINITY;
      let count = 0;
      for (const gap of gaps) {
        now += gap;
        if (now - windowStart >= perMs) {
          windowStart = now;
          count = 0;
        }
        count++;
        const expected = count <= frames ? 'pass' : count > frames * FLOOD_CLOSE_FACTOR ? 'close' : 'drop';
        assert.equal(conn.rate(now), expected);
      }
    }),
  );
});

void test('a 1004 notice is due at most once a second', () => {
  const conn = new NodeConnection({} as WebSocket, 'n', fixedClock, { frames: 1, perMs: 1000 });
  assert.equal(conn.rateNoticeDue(0), true);
  assert.equal(conn.rateNoticeDue(999), false);
  assert.equal(conn.rateNoticeDue(1000), true);
  assert.equal(conn.rateNoticeDue(1500), false);
});

void test('request: sent as hup_action_request, settled by its id, refused past the cap or for an id in use', async (t) => {
  const { server, received } = await pair(t);
  const conn = new NodeConnection(server, 'pi-1', fixedClock, { frames: 100, perMs: 1000 });
  conn.nodeId = 'pi-1';
  const waiting = Array.from({ length: MAX_PENDING_PER_NODE }, (_, i) => conn.request({ action_id: `a${i}`, name: 'blink', params: {} }, 60_000));
  await assert.rejects(conn.request({ action_id: 'more', name: 'blink', params: {} }, 60_000), NodeBusy);
  await assert.rejects(conn.request({ action_id: 'a0', name: 'blink', params: {} }, 60_000), /already waiting/);
  assert.equal(conn.settle('nobody', { success: true }), false);
  assert.equal(conn.settle('a0', { action_id: 'a0', success: true }), true);
  assert.equal((await waiting[0])?.success, true);
  assert.equal(conn.settle('a0', { action_id: 'a0', success: true }), false, 'settled once');
  conn.failAll('disconnected');
  const rest = await Promise.allSettled(waiting.slice(1));
  assert.ok(rest.every((r) => r.status === 'rejected' && r.reason instanceof NodeUnreachable && r.reason.reason === 'disconnected'));
  while (received.length < MAX_PENDING_PER_NODE) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(received[5], { hup_version: '1.4.0', type: 'hup_action_request', ts: 1, payload: { action_id: 'a5', name: 'blink', params: {} } });
});

void test('request: no response within the wait rejects as timeout', async (t) => {
  const { server } = await pair(t);
  const conn = new NodeConnection(server, 'pi-1', fixedClock, { frames: 100, perMs: 1000 });
  await assert.rejects(conn.request({ action_id: 'x', name: 'blink', params: {} }, 5), (err: unknown) => err instanceof NodeUnreachable && err.reason === 'timeout');
});

void test('close: reason kept, the peer sees the code, a second close is harmless', async (t) => {
  const { server, client } = await pair(t);
  const conn = new NodeConnection(server, 'pi-1', fixedClock, { frames: 100, perMs: 1000 });
  const closed = new Promise<number>((resolve) => client.once('close', (code: number) => resolve(code)));
  conn.error({ code: 1002, name: 'bad_schema', message: 'm', ref: null }, false);
  conn.close(4002, 'bad_schema');
  conn.close(4004, 'stale_heartbeat');
  assert.equal(conn.closeReason, 'bad_schema');
  assert.equal(await closed, 4002);
  assert.equal(conn.open, false);
});
