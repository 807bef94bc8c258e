// WS /v1/session on a real listening fastify (port 0) with the real `ws` client: auth, open/resume,
// streaming, fan-out to several clients, malformed frames answered with errors on a connection that
// stays usable, leave/close.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { connect as connectTcp } from 'node:net';
import { testApp, TEST_TOKEN } from '../../helpers/app';
import { sessionRoutes } from '../../../daemon/ws/session-routes';
import type { BrainMessage } from '../../../protocol/session';
import type { AgentSettings } from '../../../daemon/agent/agent';
import { ScriptedProvider, makeAgent, say, silent } from '../agent/agent-fixtures';

class Peer {
  readonly frames: BrainMessage[] = [];
  private waiters: { pred: (m: BrainMessage) => boolean; resolve: (m: BrainMessage) => void }[] = [];

  constructor(readonly ws: WebSocket) {
    ws.on('message', (d: Buffer) => {
      const m = JSON.parse(d.toString('utf8')) as BrainMessage;
      this.frames.push(m);
      this.waiters = this.waiters.filter((w) => (w.pred(m) ? (w.resolve(m), false) : true));
    });
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  next<T extends BrainMessage['type']>(type: T, pred: (m: Extract<BrainMessage, { type: T }>) => boolean = () => true): Promise<Extract<BrainMessage, { type: T }>> {
    return new Promise((resolve) => this.waiters.push({ pred: (m) => m.type === type && pred(m as Extract<BrainMessage, { type: T }>), resolve: resolve as (m: BrainMessage) => void }));
  }

  async open(sessionId = ''): Promise<string> {
    const reply = this.next('session_opened');
    this.send({ type: 'session_open', session_id: sessionId, payload: {} });
    return (await reply).session_id;
  }
}

async function setup(t: TestContext, settings: Partial<AgentSettings> = {}) {
  const fx = makeAgent(new ScriptedProvider([(req) => say(`echo: ${(req.messages.at(-1) as { content: string }).content}`)]), { settings });
  const { app } = await testApp({ sockets: [sessionRoutes({ sessions: fx.agent.sessions, logger: silent, options: { heartbeatMs: 60_000, maxBufferedBytes: 1 << 20 } })] });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const url = `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/session`;
  const peers: WebSocket[] = [];
  t.after(async () => {
    for (const p of peers) p.terminate();
    await app.close();
  });
  const connect = (opts: { protocols?: string[]; headers?: Record<string, string> } = { headers: { authorization: `Bearer ${TEST_TOKEN}` } }) =>
    new Promise<Peer>((resolve, reject) => {
      const ws = new WebSocket(url, opts.protocols ?? [], { headers: opts.headers ?? {} });
      peers.push(ws);
      ws.once('open', () => resolve(new Peer(ws)));
      ws.once('unexpected-response', (req, res) => {
        // ws leaves the TCP connection open after a refused upgrade; a real client hangs up.
        req.destroy();
        reject(new Error(`HTTP ${res.statusCode}`));
      });
      ws.once('error', reject);
    });
  return { ...fx, connect, url };
}

void test('a token is required; the subprotocol form works for browsers', async (t) => {
  const { connect } = await setup(t);
  await assert.rejects(connect({ headers: {} }), /HTTP 401/);
  const peer = await connect({ protocols: ['svc.v1', `svc.bearer.${TEST_TOKEN}`] });
  assert.equal(peer.ws.protocol, 'svc.v1');
  assert.match(await peer.open(), /^ses_/);
});

void test('open, send, receive the streamed answer closed by text_response', async (t) => {
  const { connect } = await setup(t);
  const peer = await connect();
  const sid = await peer.open();
  const done = peer.next('text_response');
  peer.send({ type: 'text_command', session_id: sid, payload: { text: 'hello', turn_id: 't1' } });
  const r = await done;
  assert.equal(r.payload.turn_id, 't1');
  assert.equal(r.payload.text, 'echo: hello');
  assert.deepEqual(peer.frames.map((f) => f.type), ['session_opened', 'turn_started', 'stream_delta', 'text_response']);
});

void test('malformed frames get an error each and the connection keeps working', async (t) => {
  const { connect } = await setup(t);
  const peer = await connect();
  const cases: [unknown, string][] = [
    ['{not json', 'BAD_FRAME'],
    ['[1,2]', 'BAD_FRAME'],
    [{ session_id: 'x', payload: {} }, 'BAD_FRAME'],
    [{ type: 'launch_missiles', session_id: '', payload: {} }, 'UNKNOWN_TYPE'],
    [{ type: 'text_command', session_id: '', payload: { text: '' } }, 'INVALID_PAYLOAD'],
    [{ type: 'text_command', session_id: '', payload: { text: 'hi', extra: 1 } }, 'INVALID_PAYLOAD'],
    [{ type: 'session_open', session_id: 'ses_nope', payload: {} }, 'NOT_FOUND'],
  ];
  for (const [frame, code] of cases) {
    const err = peer.next('error');
    peer.send(frame);
    assert.equal((await err).payload.code, code, JSON.stringify(frame));
  }
  const binary = peer.next('error');
  peer.ws.send(Buffer.from([0, 1, 2]), { binary: true });
  assert.equal((await binary).payload.code, 'BAD_FRAME');
  const pong = peer.next('pong');
  peer.send({ type: 'ping', session_id: '', payload: { nonce: 'n1' } });
  assert.equal((await pong).payload.nonce, 'n1');
  assert.equal(peer.ws.readyState, WebSocket.OPEN);
});

void test('several clients on one session all receive its events; leave detaches only one', async (t) => {
  const { connect, agent } = await setup(t);
  const [a, b] = [await connect(), await connect()];
  const sid = await a.open();
  assert.equal(await b.open(sid), sid);
  const seenByB = b.next('text_response');
  const seenByA = a.next('text_response');
  a.send({ type: 'text_command', session_id: sid, payload: { text: 'for both' } });
  assert.equal((await seenByB).payload.text, 'echo: for both');
  assert.equal((await seenByA).payload.text, 'echo: for both');
  assert.equal(agent.sessions.stats().clients, 2);
  const left = b.next('session_closed');
  b.send({ type: 'session_leave', session_id: sid, payload: {} });
  assert.equal((await left).payload.reason, 'left');
  assert.equal(agent.sessions.stats().open, 1);
  const telemetry = a.next('telemetry');
  const c = await connect();
  await c.open(sid);
  c.send({ type: 'telemetry', session_id: sid, payload: { source: 'phone', readings: { steps: 1200 } } });
  assert.deepEqual((await telemetry).payload.readings, { steps: 1200 });
});

void test('session_close ends the session for every client and writes its episode', async (t) => {
  const { connect, memory, agent } = await setup(t);
  const [a, b] = [await connect(), await connect()];
  const sid = await a.open();
  await b.open(sid);
  const answered = a.next('text_response');
  a.send({ type: 'text_command', session_id: sid, payload: { text: 'keep this' } });
  await answered;
  const closedB = b.next('session_closed');
  a.send({ type: 'session_close', session_id: sid, payload: {} });
  const closed = await closedB;
  assert.equal(closed.payload.reason, 'closed_by_client');
  assert.equal(closed.payload.episode_id, memory.episodes[0]?.id);
  assert.equal(agent.sessions.stats().open, 0);
  // The closed session is gone: a later text_command to it opens a new session, and says so.
  const reopened = b.next('session_opened');
  const answer = b.next('text_response');
  b.send({ type: 'text_command', session_id: sid, payload: { text: 'too late' } });
  const fresh = await reopened;
  assert.ok(fresh.session_id !== sid && !fresh.payload.resumed);
  assert.equal((await answer).session_id, fresh.session_id);
});

void test('a spec-literal client chats without session_open: "" or an unknown id opens a session first', async (t) => {
  const { connect } = await setup(t);
  for (const sessionId of ['', 'ses_nope']) {
    const peer = await connect();
    const opened = peer.next('session_opened');
    const answer = peer.next('text_response');
    peer.send({ type: 'text_command', session_id: sessionId, payload: { text: 'hi there' } });
    const sid = (await opened).session_id;
    assert.match(sid, /^ses_/);
    assert.notEqual(sid, sessionId);
    const r = await answer;
    assert.equal(r.session_id, sid);
    assert.equal(r.payload.text, 'echo: hi there');
    // "" now means the attached session; another id is still a mistake the client hears about.
    const again = peer.next('text_response');
    peer.send({ type: 'text_command', session_id: '', payload: { text: 'and again' } });
    assert.equal((await again).session_id, sid);
    const err = peer.next('error');
    peer.send({ type: 'text_command', session_id: 'ses_other', payload: { text: 'hi' } });
    assert.equal((await err).payload.code, 'NOT_IN_SESSION');
    assert.deepEqual(peer.frames.filter((f) => f.type === 'session_opened').length, 1);
  }
});

void test('a text_command naming an open session on a fresh connection joins it', async (t) => {
  const { connect } = await setup(t);
  const a = await connect();
  const sid = await a.open();
  const b = await connect();
  const joined = b.next('session_opened');
  const seenByA = a.next('text_response');
  b.send({ type: 'text_command', session_id: sid, payload: { text: 'from b' } });
  const j = await joined;
  assert.ok(j.session_id === sid && j.payload.resumed && j.payload.clients === 2);
  assert.equal((await seenByA).payload.text, 'echo: from b');
});

void test('one connection cannot open more than its share of sessions; another still can', async (t) => {
  const { connect, agent } = await setup(t, { max_sessions_per_connection: 3 });
  const flood = await connect();
  for (let i = 0; i < 3; i++) await flood.open();
  const refused = flood.next('error');
  flood.send({ type: 'session_open', session_id: '', payload: {} });
  const err = await refused;
  assert.equal(err.payload.code, 'RATE_LIMITED');
  assert.deepEqual(err.payload.details, { scope: 'connection', limit: 3, open: 3 });
  assert.equal(agent.sessions.stats().open, 3);
  const other = await connect();
  assert.match(await other.open(), /^ses_/);
});

void test('a closed socket detaches from its session; the session can be resumed', async (t) => {
  const { connect, agent } = await setup(t);
  const a = await connect();
  const sid = await a.open();
  a.ws.close();
  await new Promise((r) => a.ws.once('close', r));
  for (let i = 0; i < 100 && agent.sessions.stats().clients > 0; i++) await new Promise((r) => setImmediate(r));
  assert.equal(agent.sessions.stats().withClients, 0);
  const b = await connect();
  assert.equal(await b.open(sid), sid);
});

/** Sends one raw HTTP/1.1 upgrade request and resolves with everything the server wrote before it closed the connection. */
function rawUpgrade(url: string, path: string, headers: Record<string, string> = {}): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connectTcp(Number(port), hostname);
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    const lines = [`GET ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

// The server, not the client, must close these connections: a leaked upgrade socket also blocks app.close().
void test('a refused upgrade (no token) is answered 401 and the brain closes the connection', { timeout: 20_000 }, async (t) => {
  const { url } = await setup(t);
  const answer = await rawUpgrade(url, '/v1/session');
  assert.match(answer, /^HTTP\/1\.1 401 /);
  assert.match(answer, /\r\nconnection: close\r\n/i);
  assert.match(answer, /"code":"UNAUTHORIZED"/);
});

void test('an upgrade to a path without a WebSocket route gets its plain HTTP answer, then the connection closes', { timeout: 20_000 }, async (t) => {
  const { url } = await setup(t);
  const health = await rawUpgrade(url, '/health');
  assert.match(health, /^HTTP\/1\.1 200 /);
  assert.match(health, /"status":"ok"/);
  const unknown = await rawUpgrade(url, '/v1/nothing-here', { authorization: `Bearer ${TEST_TOKEN}` });
  assert.match(unknown, /^HTTP\/1\.1 404 /);
  assert.match(unknown, /"code":"NOT_FOUND"/);
});

void test('an accepted upgrade still speaks WebSocket after the refused ones', { timeout: 20_000 }, async (t) => {
  const { connect } = await setup(t);
  await assert.rejects(connect({ headers: {} }), /HTTP 401/);
  const peer = await connect();
  assert.match(await peer.open(), /^ses_/);
});
