// Slow clients cannot hold the brain's sockets (issue: request bodies trickled a byte every 5 s stayed
// open for minutes, and a 401 left its socket open while bytes kept coming). The brain runs with short
// timeouts from settings.json; each test waits for the server to close the socket, never on a clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import { openSocket, parseResponse } from '../helpers/raw-http';

async function slowBrain(): Promise<BrainProcess> {
  const home = tempHome();
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ server: { request_timeout_ms: 2000, headers_timeout_ms: 1000 } }));
  return startBrain({ home, keepHome: false });
}

/** Trickles `bytes` one at a time every `everyMs` until the server closes the socket; resolves with what it answered. */
function trickle(socket: Socket, head: string, bytes: number, everyMs: number): Promise<{ answer: string; sentBody: number }> {
  return new Promise((resolve) => {
    let answer = '';
    let sent = 0;
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.on('error', () => undefined); // EPIPE/ECONNRESET once the server has closed: the close event follows
    const timer = setInterval(() => {
      if (sent >= bytes || socket.destroyed) return clearInterval(timer);
      socket.write('x');
      sent++;
    }, everyMs);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ answer, sentBody: sent });
    });
    socket.write(head);
  });
}

const post = (token?: string): string =>
  ['POST /api/memory/note HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json', 'Content-Length: 200', ...(token ? [`Authorization: Bearer ${token}`] : []), '', ''].join('\r\n');

void test('an authenticated body that trickles in is answered 408 in the envelope and closed', async (t) => {
  const brain = await slowBrain();
  t.after(() => brain.stop());
  const { answer, sentBody } = await trickle(await openSocket(brain.port), post(brain.token), 200, 250);
  assert.ok(sentBody < 200, 'the server closed the socket before the body was complete');
  const r = parseResponse(answer);
  assert.equal(r.status, 408, answer);
  assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, 'REQUEST_TIMEOUT');
  const notes = await brain.api('/api/memory/notes');
  assert.equal(notes.status, 200, 'the brain serves on');
  assert.deepEqual(((await notes.json()) as { items: unknown[] }).items, [], 'nothing was stored');
});

void test('a refused request is answered 401 and closed at once, whatever the client still sends', async (t) => {
  const brain = await slowBrain();
  t.after(() => brain.stop());
  const { answer, sentBody } = await trickle(await openSocket(brain.port), post(), 200, 250);
  assert.equal(parseResponse(answer).status, 401, answer);
  assert.ok(sentBody < 200, 'closed while the body was still trickling');
});

void test('a connection that never sends a request is closed', async (t) => {
  const brain = await slowBrain();
  t.after(() => brain.stop());
  const socket = await openSocket(brain.port);
  let answer = '';
  socket.on('data', (d: Buffer) => (answer += d.toString()));
  await new Promise((resolve) => socket.on('close', resolve));
  assert.equal(parseResponse(answer).status, 408, answer);
});

void test('fifty trickling clients at once are all closed, and /health answers meanwhile', async (t) => {
  const brain = await slowBrain();
  t.after(() => brain.stop());
  const sockets = await Promise.all(Array.from({ length: 50 }, () => openSocket(brain.port)));
  const done = sockets.map((s, i) => trickle(s, post(i % 2 ? brain.token : undefined), 200, 250));
  assert.equal((await fetch(`${brain.url}/health`)).status, 200);
  const results = await Promise.all(done);
  const statuses = results.map((r) => parseResponse(r.answer).status).sort();
  assert.deepEqual([...new Set(statuses)], [401, 408]);
  assert.ok(results.every((r) => r.sentBody < 200));
});
