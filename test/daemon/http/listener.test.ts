// HttpListener on real loopback sockets: one http.Server answers on every host (127.0.0.1 and ::1),
// listening elsewhere keeps the port, keeps the connections the new hosts still cover (a keep-alive
// HTTP connection, a WebSocket) and closes the others (a WebSocket hears 1001), and a bind that fails
// leaves the brain listening where it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, Agent, type Server } from 'node:http';
import pino from 'pino';
import { WebSocket, WebSocketServer } from 'ws';
import { HttpListener } from '../../../daemon/http/listener';
import type { ListenAddress } from '../../../daemon/kernel/listener';

const logger = pino({ level: 'silent' });

interface Rig {
  listener: HttpListener;
  server: Server;
  announced: ListenAddress[][];
}

function rig(t: { after(fn: () => unknown): void }, hosts: string[]): Rig {
  const server = createServer((_req, res) => res.end('ok'));
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)));
  const listener = new HttpListener({ hosts, port: 0, pinnedHost: null, logger, closeGraceMs: 200 });
  listener.attach(server, wss);
  const announced: ListenAddress[][] = [];
  listener.onListening((a) => announced.push(a));
  t.after(async () => {
    await listener.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    wss.close();
  });
  return { listener, server, announced };
}

const url = (host: string, port: number): string => `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;

/** A GET over `agent` (keep-alive when it is one): the body, or the error code when it could not connect. */
function get(host: string, port: number, agent?: Agent): Promise<string> {
  return new Promise((resolve) => {
    const req = request(url(host, port), { agent: agent ?? false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

function openWebSocket(host: string, port: number): Promise<{ ws: WebSocket; closed: Promise<number> }> {
  const ws = new WebSocket(url(host, port).replace('http', 'ws'));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, closed }));
    ws.once('error', reject);
  });
}

void test('listens on 127.0.0.1 and ::1 at one port, and tells its handlers where', async (t) => {
  const { listener, announced } = rig(t, ['127.0.0.1', '::1']);
  await listener.start();
  const [v4, v6] = listener.addresses();
  assert.deepEqual([v4?.host, v4?.family, v6?.host, v6?.family], ['127.0.0.1', 'IPv4', '::1', 'IPv6']);
  assert.equal(v4?.port, v6?.port);
  assert.equal(await get('127.0.0.1', v4!.port), 'ok');
  assert.equal(await get('::1', v4!.port), 'ok');
  assert.deepEqual(announced, [listener.addresses()]);
});

void test('listen() before start only chooses the hosts', async (t) => {
  const { listener } = rig(t, ['127.0.0.1', '::1']);
  assert.deepEqual(await listener.listen(['::1']), []);
  assert.deepEqual(listener.addresses(), []);
  await listener.start();
  assert.deepEqual(listener.addresses().map((a) => a.host), ['::1']);
  assert.equal(await get('127.0.0.1', listener.addresses()[0]!.port), 'ECONNREFUSED');
});

void test('listening elsewhere keeps the port and the covered connections, and closes the others', async (t) => {
  const { listener, announced } = rig(t, ['127.0.0.1', '::1']);
  await listener.start();
  const port = listener.addresses()[0]!.port;
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => keepAlive.destroy());
  assert.equal(await get('127.0.0.1', port, keepAlive), 'ok');
  const kept = await openWebSocket('127.0.0.1', port);
  const dropped = await openWebSocket('::1', port);

  const now = await listener.listen(['127.0.0.1']);
  assert.deepEqual(now, [{ host: '127.0.0.1', family: 'IPv4', port }]);
  assert.equal(announced.length, 2, 'announced at start and after the move');
  assert.equal(await dropped.closed, 1001, 'the WebSocket on ::1 is told the brain went away');
  assert.equal(await get('::1', port), 'ECONNREFUSED');
  assert.equal(await get('127.0.0.1', port, keepAlive), 'ok');
  assert.equal(kept.ws.readyState, WebSocket.OPEN, 'the WebSocket on 127.0.0.1 stays');
  kept.ws.close();

  await listener.listen(['127.0.0.1', '::1']);
  assert.equal(await get('::1', port), 'ok', 'and back, on the same port');
});

void test('the request that moves the listener off its own address still gets its answer, then its connection ends', async (t) => {
  const server = createServer();
  const wss = new WebSocketServer({ noServer: true });
  const listener = new HttpListener({ hosts: ['127.0.0.1', '::1'], port: 0, pinnedHost: null, logger });
  listener.attach(server, wss);
  server.on('request', (_req, res) => {
    void listener.listen(['127.0.0.1']).then((now) => res.end(JSON.stringify(now.map((a) => a.host))));
  });
  t.after(async () => {
    await listener.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  await listener.start();
  const port = listener.addresses()[0]!.port;
  const keepAlive = new Agent({ keepAlive: true });
  t.after(() => keepAlive.destroy());
  assert.equal(await get('::1', port, keepAlive), '["127.0.0.1"]');
  assert.equal(await get('::1', port), 'ECONNREFUSED');
});

void test('closeForwarded closes the connections a local proxy forwarded and keeps the others', async (t) => {
  const { listener } = rig(t, ['127.0.0.1']);
  await listener.start();
  const port = listener.addresses()[0]!.port;
  const direct = await openWebSocket('127.0.0.1', port);
  const proxied = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { 'x-forwarded-for': '100.101.102.103' } });
  const proxiedClosed = new Promise<number>((resolve) => proxied.on('close', (code) => resolve(code)));
  await new Promise((resolve) => proxied.once('open', resolve));
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => keepAlive.destroy());
  const forwardedGet = await new Promise<string>((resolve) => {
    request(url('127.0.0.1', port), { agent: keepAlive, headers: { forwarded: 'for=100.101.102.103' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.statusCode)));
    }).end();
  });
  assert.equal(forwardedGet, '200');
  const keptAliveSocket = Object.values(keepAlive.freeSockets).flat()[0];
  const socketClosed = new Promise((resolve) => keptAliveSocket?.once('close', resolve));

  assert.equal(listener.closeForwarded(), 2);
  assert.equal(await proxiedClosed, 1001);
  await socketClosed;
  assert.equal(direct.ws.readyState, WebSocket.OPEN, 'a direct connection stays');
  direct.ws.close();
  assert.equal(listener.closeForwarded(), 0);
});

void test('a host that cannot be bound is refused and the previous hosts answer again', async (t) => {
  const { listener } = rig(t, ['127.0.0.1']);
  await listener.start();
  const port = listener.addresses()[0]!.port;
  // TEST-NET-1 (RFC 5737): never an address of this machine, so the bind fails with EADDRNOTAVAIL.
  await assert.rejects(listener.listen(['192.0.2.1']), { code: 'EADDRNOTAVAIL' });
  assert.deepEqual(listener.addresses(), [{ host: '127.0.0.1', family: 'IPv4', port }]);
  assert.equal(await get('127.0.0.1', port), 'ok');
});

void test('a second host this machine lacks is skipped; listen() calls run one after another', async (t) => {
  const { listener } = rig(t, ['127.0.0.1', '192.0.2.1']);
  await listener.start();
  assert.deepEqual(listener.addresses().map((a) => a.host), ['127.0.0.1']);
  const results = await Promise.all([listener.listen(['::1']), listener.listen(['127.0.0.1', '::1']), listener.listen(['127.0.0.1'])]);
  assert.deepEqual(results.map((r) => r.map((a) => a.host)), [['::1'], ['127.0.0.1', '::1'], ['127.0.0.1']]);
});
