// Seeded fuzz of the built brain, bounded: a few thousand hostile HTTP requests over every route of
// its own route table, and a few thousand hostile /v1/session frames. Whatever arrives, the brain
// answers in the envelope, never 5xx, stays up, serves a second client, and its RSS stays bounded.
// The seed is printed; FUZZ_SEED=<n> replays a run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { WebSocket } from 'ws';
import { startBrain } from '../helpers/brain-process';
import { routeTable } from '../helpers/route-table';
import { connect } from '../helpers/session-client';
import { rawRequest } from '../helpers/raw-http';
import { CLIENT_TYPES } from '../../protocol/session';
import { seeded } from '../helpers/prng';

const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
const HTTP_REQUESTS = 3000;
const WS_FRAMES = 2000;


class Gen {
  constructor(readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  string(): string {
    const pieces = ['', 'a', 'note', 'x'.repeat(this.int(300)), 'ü', '名前', '🙂', '\u0000', '\u0007', '\n# Heading', '../../etc/passwd', '%00', '%zz', '<script>', "' OR 1=1 --", '"', '\\', '\ud800', ' ', '\t', 'NaN', 'Infinity', '-1', '1e309', 'null', '{}', 'y'.repeat(this.int(20_000))];
    let s = '';
    for (let i = this.int(4); i >= 0; i--) s += this.pick(pieces);
    return s;
  }
  number(): number | string {
    return this.pick<number | string>([0, -1, 1, 2.5, 500, 501, 1e309, -1e309, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, 'Infinity', '-Infinity', 'NaN', '1e309', '0x10', ' 5', '']);
  }
  value(depth = 0): unknown {
    const kind = this.int(depth > 2 ? 5 : 8);
    if (kind === 0) return this.string();
    if (kind === 1) return this.number();
    if (kind === 2) return this.chance(0.5);
    if (kind === 3) return null;
    if (kind === 4) return this.string().slice(0, 40);
    if (kind === 5) return Array.from({ length: this.int(5) }, () => this.value(depth + 1));
    const keys = ['text', 'tags', 'name', 'subject', 'predicate', 'object', 'source', 'limit', 'q', 'session_id', 'enabled', 'label', 'key', 'model', 'half_life_days', 'content', 'question', this.string().slice(0, 10)];
    return Object.fromEntries(Array.from({ length: this.int(6) }, () => [this.pick(keys), this.value(depth + 1)]));
  }
}

/** URLs carry UTF-8: lone surrogates (which the generator makes on purpose for bodies) become U+FFFD. */
const wellFormed = (s: string): string => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

const rssKiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

function isEnvelope(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const e = (body).error as Record<string, unknown> | null;
  return !!e && typeof e.code === 'string' && typeof e.message === 'string' && 'details' in e && Object.keys(body).length === 1;
}

void test(`HTTP fuzz over every route (seed ${SEED}): no 5xx, every error in the envelope, the brain whole afterwards`, async (t) => {
  const brain = await startBrain({ env: { SVC_LOG_LEVEL: 'debug' } });
  t.after(() => brain.stop());
  // Providers that are not configured here are never named, so no request can make the brain call out.
  // The access routes move the listener (lan binds beyond loopback and announces over mDNS on the
  // machine's network): never from a test outside a namespace; test/e2e/access*.test.ts covers them.
  const routes = routeTable(brain).filter((r) => !r.websocket && !(r.url.startsWith('/api/access/') && r.method !== 'GET'));
  const g = new Gen(seeded(SEED));
  const rssBefore = rssKiB(brain.child.pid!);
  const statuses = new Map<number, number>();
  const failures: string[] = [];
  const one = async (): Promise<void> => {
    const route = g.pick(routes);
    const method = g.chance(0.9) ? route.method : g.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
    const path = route.url.replace(/:[A-Za-z_]+/g, () => encodeURIComponent(wellFormed(g.chance(0.3) ? 'x' : g.string().slice(0, g.chance(0.8) ? 120 : 400))));
    const query = new URLSearchParams();
    for (let i = g.int(4); i > 0; i--) query.set(g.pick(['limit', 'q', 'cursor', 'session_id', 'tier', 'include_unclaimed', 'since', g.string().slice(0, 8)]), wellFormed(String(g.chance(0.5) ? g.number() : g.string().slice(0, 200))));
    const url = `${brain.url}${path}${query.size ? `?${query.toString()}` : ''}`;
    const headers: Record<string, string> = { authorization: `Bearer ${brain.token}` };
    let body: string | undefined;
    if (method !== 'GET' && method !== 'HEAD' && g.chance(0.85)) {
      const shape = g.int(10);
      body = shape === 0 ? '{"unterminated": ' : shape === 1 ? '' : shape === 2 ? 'not json at all' : JSON.stringify(shape === 3 ? g.value(3) : g.value());
      headers['content-type'] = g.chance(0.9) ? 'application/json' : g.pick(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']);
    }
    const r = await fetch(url, { method, headers, body });
    const text = await r.text();
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    const what = `${method} ${url.slice(0, 200)} body ${body?.slice(0, 120)} → ${r.status} ${text.slice(0, 200)}`;
    if (r.status >= 500) failures.push(`5xx: ${what}`);
    else if (r.status >= 400) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        if (!(err instanceof SyntaxError)) throw err;
      }
      if (!isEnvelope(parsed)) failures.push(`not the envelope: ${what}`);
    }
  };
  for (let sent = 0; sent < HTTP_REQUESTS; sent += 8) await Promise.all(Array.from({ length: 8 }, one));
  // A few malformed requests below HTTP: each gets the envelope from the server itself.
  for (const raw of ['GARBAGE\r\n\r\n', 'GET /api/memory/notes HTTP/9.9\r\n\r\n', `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, `GET / HTTP/1.1\r\nHost: x\r\nX: ${'b'.repeat(20_000)}\r\n\r\n`, 'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n']) {
    const r = await rawRequest(brain.port, raw);
    assert.ok(r.status >= 400 && r.status < 500, `${JSON.stringify(raw.slice(0, 40))} → ${r.status}`);
    assert.ok(isEnvelope(JSON.parse(r.body)), r.body);
  }
  const rssAfter = rssKiB(brain.child.pid!);
  t.diagnostic(`seed ${SEED}: ${HTTP_REQUESTS} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, RSS ${Math.round(rssBefore / 1024)} → ${Math.round(rssAfter / 1024)} MiB`);
  assert.deepEqual(failures.slice(0, 10), [], `${failures.length} failures`);
  assert.equal((await fetch(`${brain.url}/health`)).status, 200);
  assert.equal((await brain.api('/api/memory/search?q=anything')).status, 200);
  assert.ok(rssAfter < 300 * 1024, `RSS after the fuzz is ${Math.round(rssAfter / 1024)} MiB`);
  assert.equal(brain.child.exitCode, null, 'the brain is running');
});

void test(`WebSocket fuzz of /v1/session (seed ${SEED}): the brain answers or closes, never falls over, and serves another client`, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  const g = new Gen(seeded(SEED + 1));
  const rssBefore = rssKiB(brain.child.pid!);
  const closeCodes = new Map<number, number>();
  const badFrames: string[] = [];
  let sent = 0;
  let answers = 0;
  while (sent < WS_FRAMES) {
    const ws = new WebSocket(`ws://127.0.0.1:${brain.port}/v1/session`, ['svc.v1', `svc.bearer.${brain.token}`]);
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    ws.on('error', () => undefined); // a close follows
    ws.on('message', (d: Buffer, binary: boolean) => {
      answers++;
      let m: { type?: unknown; error?: unknown; payload?: { code?: unknown; message?: unknown } } | undefined;
      try {
        m = JSON.parse(d.toString('utf8')) as typeof m;
      } catch (err) {
        if (!(err instanceof SyntaxError)) throw err;
      }
      if (binary || typeof m?.type !== 'string') badFrames.push(d.toString('utf8').slice(0, 200));
      else if (m.type === 'error' && (typeof m.payload?.code !== 'string' || typeof m.payload.message !== 'string')) badFrames.push(JSON.stringify(m).slice(0, 200));
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
    for (let i = 0; i < 100 && ws.readyState === WebSocket.OPEN; i++, sent++) {
      const kind = g.int(10);
      if (kind === 0) ws.send(Buffer.from([0xc3, 0x28, 0xff]), { binary: false }); // invalid UTF-8 in a text frame
      else if (kind === 1) ws.send(Buffer.from(g.string()), { binary: true });
      else if (kind === 2) ws.send(g.string().slice(0, 5000));
      else if (kind === 3) ws.send('x'.repeat(1024 * 1024 + 1)); // over the frame limit
      else {
        const type = g.chance(0.8) ? g.pick([...CLIENT_TYPES]) : g.string().slice(0, 30);
        const frame = g.chance(0.7) ? { type, session_id: g.chance(0.5) ? '' : g.string().slice(0, 150), payload: g.value() } : g.value();
        ws.send(JSON.stringify(frame));
      }
      if (kind <= 3) break; // those end the connection: reconnect
    }
    if (ws.readyState === WebSocket.OPEN) ws.close(1000);
    const code = await closed;
    closeCodes.set(code, (closeCodes.get(code) ?? 0) + 1);
  }
  const rssAfter = rssKiB(brain.child.pid!);
  t.diagnostic(`seed ${SEED}: ${sent} frames, ${answers} answers, close codes ${JSON.stringify(Object.fromEntries([...closeCodes].sort()))}, RSS ${Math.round(rssBefore / 1024)} → ${Math.round(rssAfter / 1024)} MiB`);
  assert.deepEqual(badFrames.slice(0, 5), [], 'every brain frame is a typed JSON message; errors carry code and message');
  assert.ok(![...closeCodes.keys()].some((c) => c === 1011 || c === 1006), `no internal error or abnormal close: ${JSON.stringify([...closeCodes])}`);
  // Another client opens a session and gets an answer.
  const client = await connect(brain);
  client.ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  const opened = await client.next('session_opened');
  client.ws.send(JSON.stringify({ type: 'text_command', session_id: opened.session_id, payload: { text: 'hello', turn_id: 't1' } }));
  await client.next('text_response');
  client.ws.close();
  assert.equal((await fetch(`${brain.url}/health`)).status, 200);
  assert.ok(rssAfter < 300 * 1024, `RSS after the fuzz is ${Math.round(rssAfter / 1024)} MiB`);
  const errorLines = brain.lines.filter((l) => /"level":50/.test(l));
  assert.deepEqual(errorLines.slice(0, 3), [], 'client protocol errors are not logged at error level');
});
