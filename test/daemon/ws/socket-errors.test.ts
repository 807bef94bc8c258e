// socketErrorHandler against the errors a real `ws` server raises: a client's oversize frame and
// invalid UTF-8 are logged once at warn without a stack, the close handshake finishes so the client
// sees 1009 / 1007, and a fault of the brain's own is logged at error and the socket terminated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket, WebSocketServer } from 'ws';
import { isProtocolError, socketErrorHandler } from '../../../daemon/ws/socket-errors';

interface Line {
  level: 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

function recorder(): { log: { warn: (o: Record<string, unknown>, m: string) => void; error: (o: Record<string, unknown>, m: string) => void }; lines: Line[] } {
  const lines: Line[] = [];
  return { lines, log: { warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }), error: (obj, msg) => lines.push({ level: 'error', obj, msg }) } };
}

/** A ws server whose socket errors go through the handler; resolves with the client's close code and the log. */
async function exchange(send: (ws: WebSocket) => void): Promise<{ code: number; lines: Line[]; terminated: boolean }> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', maxPayload: 1024 });
  await new Promise((r) => server.once('listening', r));
  const { log, lines } = recorder();
  let terminated = false;
  server.on('connection', (socket) => {
    const spy = { terminate: () => ((terminated = true), socket.terminate()) };
    socket.on('error', (err) => socketErrorHandler(err, spy, { log: log as never, url: '/v1/session?access_token=secret' }));
  });
  const address = server.address();
  const client = new WebSocket(`ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
  await new Promise((r) => client.once('open', r));
  const code = new Promise<number>((resolve) => client.once('close', (c) => resolve(c)));
  send(client);
  const result = { code: await code, lines, terminated };
  await new Promise((r) => server.close(r));
  return result;
}

void test('an oversize frame closes 1009 and logs one warn line without a stack or the query string', async () => {
  const r = await exchange((ws) => ws.send('x'.repeat(2048)));
  assert.equal(r.code, 1009);
  assert.equal(r.terminated, false);
  assert.deepEqual(r.lines.map((l) => l.level), ['warn']);
  assert.equal(r.lines[0]!.obj.code, 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH');
  assert.equal(r.lines[0]!.obj.close_code, 1009);
  assert.equal(r.lines[0]!.obj.path, '/v1/session');
  assert.ok(!('err' in r.lines[0]!.obj) && !JSON.stringify(r.lines[0]).includes('    at '));
});

void test('invalid UTF-8 in a text frame closes 1007 and logs at warn', async () => {
  const r = await exchange((ws) => ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false }));
  assert.equal(r.code, 1007);
  assert.deepEqual(r.lines.map((l) => [l.level, l.obj.code, l.obj.close_code]), [['warn', 'WS_ERR_INVALID_UTF8', 1007]]);
});

void test('any other error is the brain’s: logged at error with the error, and the socket is terminated', () => {
  const { log, lines } = recorder();
  let terminated = false;
  const err = new Error('handler bug');
  socketErrorHandler(err, { terminate: () => (terminated = true) }, { log: log as never, url: '/v1/session' });
  assert.equal(terminated, true);
  assert.deepEqual(lines.map((l) => l.level), ['error']);
  assert.equal(lines[0]!.obj.err, err);
  assert.equal(isProtocolError(Object.assign(new Error('x'), { code: 'ECONNRESET' })), false);
});
