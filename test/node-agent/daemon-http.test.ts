// The delivery client against a real loopback HTTP server: the node key as a bearer, the brain's path
// prefix kept, a JSON body with its length; a body past the bound is refused by its Content-Length or,
// when the server streams without one, once the bytes pass it; a brain that is not listening is
// BrainUnreachable; an abort (a timeout) rejects with the signal's reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brainHttp, BrainUnreachable, ResponseTooLarge } from '../../node-agent/daemon-http';

const KEY = `svcdk_${'k'.repeat(43)}`;

async function server(t: { after(fn: () => Promise<void>): void }, handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<string> {
  const s = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handle(req, res, body));
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => {
    s.closeAllConnections();
    s.close(() => resolve());
  }));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

const signal = (): AbortSignal => AbortSignal.timeout(5000);

void test('GET and POST with the node key under the brain\'s path prefix', async (t) => {
  const seen: string[] = [];
  const url = await server(t, (req, res, body) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization} ${req.headers['content-type'] ?? '-'} ${body}`);
    res.writeHead(req.method === 'GET' ? 200 : 404, { 'content-type': 'application/json' }).end('{"daemon":null}');
  });
  const http = brainHttp(`${url}/brain/`, KEY);
  const got = await http({ method: 'GET', path: '/api/daemons/mine', signal: signal(), maxBytes: 100 });
  assert.equal(got.status, 200);
  assert.equal(Buffer.from(got.body).toString(), '{"daemon":null}');
  const posted = await http({ method: 'POST', path: '/api/daemons/mine/status', body: '{"a":1}', signal: signal(), maxBytes: 100 });
  assert.equal(posted.status, 404);
  assert.deepEqual(seen, [`GET /brain/api/daemons/mine Bearer ${KEY} - `, `POST /brain/api/daemons/mine/status Bearer ${KEY} application/json {"a":1}`]);
});

void test('a body past the bound: by its Content-Length, or by the bytes of a stream without one', async (t) => {
  const url = await server(t, (req, res) => {
    if (req.url === '/declared') return void res.writeHead(200, { 'content-length': '1000' }).end('x'.repeat(1000));
    res.writeHead(200);
    res.write('y'.repeat(600));
    res.end('y'.repeat(600));
  });
  const http = brainHttp(url, KEY);
  await assert.rejects(http({ method: 'GET', path: '/declared', signal: signal(), maxBytes: 999 }), ResponseTooLarge);
  await assert.rejects(http({ method: 'GET', path: '/streamed', signal: signal(), maxBytes: 1000 }), ResponseTooLarge);
  assert.equal((await http({ method: 'GET', path: '/declared', signal: signal(), maxBytes: 1000 })).body.length, 1000);
});

void test('nobody listening is BrainUnreachable; an abort rejects with its reason', async (t) => {
  const closed = await server(t, () => undefined);
  const gone = `http://127.0.0.1:1`;
  await assert.rejects(brainHttp(gone, KEY)({ method: 'GET', path: '/x', signal: signal(), maxBytes: 10 }), BrainUnreachable);
  const controller = new AbortController();
  const pending = brainHttp(closed, KEY)({ method: 'GET', path: '/hangs', signal: controller.signal, maxBytes: 10 });
  controller.abort(new DOMException('stopping', 'AbortError'));
  await assert.rejects(pending, (err: unknown) => err instanceof DOMException && err.message === 'stopping');
});
