// The two protections of a session socket, on a plain fake socket: a slow consumer is disconnected
// once its unsent bytes pass the bound; a peer that stops answering pings is terminated.
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { WsClient } from '../../../daemon/ws/ws-client';
import type { BrainMessage } from '../../../protocol/session';

class FakeSocket {
  readyState: 0 | 1 | 2 | 3 = 1;
  bufferedAmount = 0;
  sent: string[] = [];
  closes: number[] = [];
  terminated = false;
  pings = 0;
  /** Bytes the peer reads per send: 0 = it has stopped reading. */
  drainPerSend = 0;
  send(data: string): void {
    this.sent.push(data);
    this.bufferedAmount = Math.max(0, this.bufferedAmount + data.length - this.drainPerSend);
  }
  close(code: number): void {
    this.closes.push(code);
  }
  terminate(): void {
    this.terminated = true;
    this.readyState = 3;
  }
  ping(): void {
    this.pings++;
  }
}

const delta = (text: string): BrainMessage => ({ type: 'stream_delta', session_id: 's', payload: { turn_id: 't', text } });

void test('a reader that keeps up is never dropped', () => {
  const socket = new FakeSocket();
  socket.drainPerSend = 10_000;
  const client = new WsClient(socket, { heartbeatMs: 1000, maxBufferedBytes: 4096 });
  for (let i = 0; i < 1000; i++) client.send(delta('x'.repeat(500)));
  assert.equal(client.dropped, null);
  assert.equal(socket.sent.length, 1000);
});

void test('a slow consumer is closed with 4008 once its buffer passes the bound, and gets nothing more', () => {
  mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
  try {
    const socket = new FakeSocket();
    const drops: string[] = [];
    const client = new WsClient(socket, { heartbeatMs: 1000, maxBufferedBytes: 4096 }, (r) => drops.push(r));
    for (let i = 0; i < 100; i++) client.send(delta('x'.repeat(500)));
    assert.equal(client.dropped, 'slow_consumer');
    assert.deepEqual(socket.closes, [4008]);
    assert.deepEqual(drops, ['slow_consumer']);
    assert.ok(socket.sent.length < 12, `stopped sending after the bound (${socket.sent.length} frames)`);
    mock.timers.tick(1000);
    assert.equal(socket.terminated, true, 'the close frame is not waited on forever');
  } finally {
    mock.timers.reset();
  }
});

void test('heartbeat: a peer that answers stays; one that goes silent for a beat is terminated', () => {
  mock.timers.enable({ apis: ['setInterval', 'setTimeout'] });
  try {
    const socket = new FakeSocket();
    const client = new WsClient(socket, { heartbeatMs: 1000, maxBufferedBytes: 4096 });
    client.start();
    mock.timers.tick(1000);
    assert.equal(socket.pings, 1);
    client.seen();
    mock.timers.tick(1000);
    assert.equal(socket.pings, 2);
    assert.equal(socket.terminated, false);
    mock.timers.tick(1000);
    assert.equal(socket.terminated, true);
    assert.equal(client.dropped, 'heartbeat');
    client.stop();
  } finally {
    mock.timers.reset();
  }
});
