// What one client can take from the session layer of the built brain (docs/protocol.md "Limits"):
// a connection flooding session_open is refused past its own limit while others still chat; at the
// global limit the oldest session without clients ends instead of refusing; a chat-volume attack
// stays inside the byte budget (the brain runs with a 64 MiB V8 heap, so holding what was sent would
// kill it); a client's protocol errors close 1009 / 1007 and log at warn; a client that never sends
// session_open still chats. Every loop is bounded; waits are on frames, never on a clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import type { BrainMessage } from '../../protocol/session';

interface Peer {
  ws: WebSocket;
  frames: BrainMessage[];
  next<T extends BrainMessage['type']>(type: T): Promise<Extract<BrainMessage, { type: T }>>;
  send(frame: unknown): void;
}

function connect(brain: BrainProcess): Promise<Peer> {
  const ws = new WebSocket(`ws://127.0.0.1:${brain.port}/v1/session`, ['svc.v1', `svc.bearer.${brain.token}`], { maxPayload: 64 * 1024 * 1024 });
  const frames: BrainMessage[] = [];
  let waiting: { type: string; resolve: (m: BrainMessage) => void }[] = [];
  ws.on('message', (d: Buffer) => {
    const m = JSON.parse(d.toString('utf8')) as BrainMessage;
    frames.push(m);
    const i = waiting.findIndex((w) => w.type === m.type);
    if (i >= 0) waiting.splice(i, 1)[0]!.resolve(m);
  });
  ws.on('close', () => (waiting = []));
  const peer: Peer = {
    ws,
    frames,
    next: <T extends BrainMessage['type']>(type: T) => new Promise<Extract<BrainMessage, { type: T }>>((resolve) => waiting.push({ type, resolve: resolve as (m: BrainMessage) => void })),
    send: (frame) => ws.send(JSON.stringify(frame)),
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(peer));
    ws.once('error', reject);
  });
}

async function brainWith(settings: object, env: Record<string, string> = {}): Promise<BrainProcess> {
  const home = tempHome();
  writeFileSync(join(home, 'settings.json'), JSON.stringify(settings));
  return startBrain({ home, env });
}

async function open(peer: Peer, sessionId = ''): Promise<string> {
  const opened = peer.next('session_opened');
  peer.send({ type: 'session_open', session_id: sessionId, payload: {} });
  return (await opened).session_id;
}

async function chat(peer: Peer, sessionId: string, text: string): Promise<Extract<BrainMessage, { type: 'text_response' }>> {
  const answer = peer.next('text_response');
  peer.send({ type: 'text_command', session_id: sessionId, payload: { text } });
  return answer;
}

const status = async (brain: BrainProcess): Promise<{ sessions: { open: number } }> => (await (await brain.api('/api/dashboard/status')).json()) as { sessions: { open: number } };

/** `svc serve` re-executes node with its runtime flags: the brain is the child of the spawned process when there is one. */
function brainPid(brain: BrainProcess): number {
  const pid = brain.child.pid!;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return children ? Number(children.split(' ')[0]) : pid;
}

const rssKiB = (pid: number): number => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

void test('one connection flooding session_open is refused past its limit; another client still chats; the dashboard answers', async (t) => {
  const brain = await brainWith({});
  t.after(() => brain.kill());
  const flood = await connect(brain);
  const FRAMES = 300;
  let answered = 0;
  const done = new Promise<void>((resolve) => flood.ws.on('message', () => ++answered === FRAMES && resolve()));
  for (let i = 0; i < FRAMES; i++) flood.send({ type: 'session_open', session_id: '', payload: {} });
  await done;
  const opened = flood.frames.filter((f) => f.type === 'session_opened').length;
  const refused = flood.frames.filter((f): f is Extract<BrainMessage, { type: 'error' }> => f.type === 'error');
  assert.equal(opened, 16, 'agent.max_sessions_per_connection (default 16)');
  assert.equal(refused.length, FRAMES - 16);
  assert.ok(refused.every((e) => e.payload.code === 'RATE_LIMITED' && (e.payload.details as { scope: string }).scope === 'connection'));
  assert.match(refused[0]!.payload.message, /max_sessions_per_connection/);
  assert.equal((await status(brain)).sessions.open, 16);

  const other = await connect(brain);
  const sid = await open(other);
  assert.equal((await chat(other, sid, 'hello')).session_id, sid);
  const r = await brain.api('/api/dashboard/command', { method: 'POST', body: JSON.stringify({ text: 'status please' }) });
  assert.equal(r.status, 200);
  flood.ws.close();
  other.ws.close();
});

void test('at the session limit the oldest session without clients ends instead of a refusal with UNAVAILABLE', async (t) => {
  const brain = await brainWith({ agent: { max_sessions: 12 } });
  t.after(() => brain.kill());
  const ids: string[] = [];
  for (let c = 0; c < 3; c++) {
    const peer = await connect(brain);
    for (let i = 0; i < 4; i++) {
      const sid = await open(peer);
      await chat(peer, sid, `session ${c}.${i}`);
      ids.push(sid);
    }
    const closed = new Promise((r) => peer.ws.once('close', r));
    peer.ws.close();
    await closed;
  }
  assert.equal((await status(brain)).sessions.open, 12);
  const late = await connect(brain);
  const newcomers: string[] = [];
  for (let i = 0; i < 3; i++) newcomers.push(await open(late));
  assert.equal((await status(brain)).sessions.open, 12, 'the limit holds');
  // The oldest three went (their episodes were written); the rest can still be resumed.
  const probe = await connect(brain);
  for (const gone of ids.slice(0, 3)) {
    const err = probe.next('error');
    probe.send({ type: 'session_open', session_id: gone, payload: {} });
    assert.equal((await err).payload.code, 'NOT_FOUND');
  }
  assert.equal(await open(probe, ids[3]), ids[3]);
  const r = await brain.api('/api/dashboard/command', { method: 'POST', body: JSON.stringify({ text: 'still here?' }) });
  assert.equal(r.status, 200, 'the dashboard made room too');
  const episodes = (await (await brain.api('/api/memory/episodes?limit=50')).json()) as { items: { session_id: string; reason: string }[] };
  for (const gone of ids.slice(0, 3)) assert.ok(episodes.items.some((e) => e.session_id === gone && e.reason === 'session_end'), `episode of ${gone}`);
  late.ws.close();
  probe.ws.close();
});

void test('chat volume stays inside the byte budget: the brain with a 64 MiB heap survives, RSS bounded, another client chats', { timeout: 240_000 }, async (t) => {
  const budget = 4 * 1024 * 1024;
  const brain = await brainWith({ agent: { session_memory_bytes: budget, session_transcript_bytes: 256 * 1024 } }, { NODE_OPTIONS: '--max-old-space-size=64' });
  t.after(() => brain.kill());
  const pid = brainPid(brain);
  const before = rssKiB(pid);
  const CLIENTS = 6;
  const TURNS = 300;
  let sentChars = 0;
  // 16,000 CJK characters per message (the schema's maximum): 32 KB each as a V8 string, 48 KB UTF-8.
  const message = (c: number, i: number): string => Array.from({ length: 16_000 }, (_, j) => String.fromCharCode(0x4e00 + ((c * 7919 + i * 104_729 + j * 31) % 20_000))).join('');
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const peer = await connect(brain);
      let sid = await open(peer);
      for (let i = 0; i < TURNS; i++) {
        if (i > 0 && i % 25 === 0) sid = await open(peer); // leave sessions behind, detached, as the attack did
        const text = message(c, i);
        sentChars += text.length;
        const r = await chat(peer, sid, text);
        assert.equal(r.session_id, sid);
      }
      peer.ws.close();
    }),
  );
  const after = rssKiB(pid);
  // Ten budgets of headroom: the held text is at most one budget (UTF-16 in V8, so two), and the rest is
  // the heap's own growth to its working size, malloc and SQLite's page cache (33-42 MiB of growth
  // measured). Measured from at least 80 MiB: right after start the RSS read varies (71-85 MiB seen) with
  // how far V8 has got, which must not tighten the bound.
  const base = Math.max(before, 80 * 1024);
  const bound = base + (10 * budget) / 1024;
  const heldIfUnbounded = (sentChars * 2) / 1024;
  t.diagnostic(`sessions ${CLIENTS * (TURNS / 25)}, sent ${sentChars} chars (${Math.round((sentChars * 3) / 2 ** 20)} MiB UTF-8), RSS ${before} → ${after} KiB, bound ${bound} KiB`);
  assert.ok(heldIfUnbounded > 1.3 * (bound - base), 'the attack sends more than the bound allows to be held');
  assert.equal(brain.child.exitCode, null, 'the brain is alive');
  assert.ok(after < bound, `RSS ${after} KiB stays under ${bound} KiB`);
  assert.equal((await fetch(`${brain.url}/health`)).status, 200);
  const other = await connect(brain);
  const sid = await open(other);
  assert.equal((await chat(other, sid, 'are you still there?')).session_id, sid);
  assert.ok((await status(brain)).sessions.open <= 16 * CLIENTS + 1);
  other.ws.close();
});

void test('an oversize frame closes 1009, invalid UTF-8 closes 1007; logged at warn without a stack; the brain keeps serving', async (t) => {
  const brain = await brainWith({});
  t.after(() => brain.kill());
  const cases: [string, (ws: WebSocket) => void, number, string][] = [
    ['oversize', (ws) => ws.send('x'.repeat(1024 * 1024 + 1)), 1009, 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'],
    ['bad utf-8', (ws) => ws.send(Buffer.from([0x7b, 0xc3, 0x28, 0x7d]), { binary: false }), 1007, 'WS_ERR_INVALID_UTF8'],
  ];
  for (const [name, send, code, errCode] of cases) {
    const peer = await connect(brain);
    const closed = new Promise<number>((resolve) => peer.ws.once('close', (n) => resolve(n)));
    send(peer.ws);
    assert.equal(await closed, code, name);
    for (let i = 0; i < 200 && !brain.lines.some((l) => l.includes(errCode)); i++) await new Promise((r) => setTimeout(r, 10));
    const lines = brain.lines.filter((l) => l.includes(errCode)).map((l) => JSON.parse(l) as { level: number; close_code: number; err?: unknown });
    assert.equal(lines.length, 1, `${name}: one log line`);
    assert.equal(lines[0]!.level, 40, `${name}: warn`);
    assert.equal(lines[0]!.close_code, code);
    assert.equal(lines[0]!.err, undefined, `${name}: no error object, no stack`);
  }
  assert.ok(!brain.lines.some((l) => (JSON.parse(l) as { level: number }).level >= 50), 'nothing logged at error');
  const peer = await connect(brain);
  const sid = await open(peer);
  assert.equal((await chat(peer, sid, 'hi')).session_id, sid);
  peer.ws.close();
});

void test('a spec-literal client: text_command with an empty or unknown session_id gets session_opened, then its answer', async (t) => {
  const brain = await brainWith({});
  t.after(() => brain.kill());
  for (const sessionId of ['', 'ses_never_opened']) {
    const peer = await connect(brain);
    const opened = peer.next('session_opened');
    const answer = peer.next('text_response');
    peer.send({ type: 'text_command', session_id: sessionId, payload: { text: 'hello there' } });
    const o = await opened;
    assert.match(o.session_id, /^ses_/);
    assert.notEqual(o.session_id, sessionId);
    assert.equal(o.payload.resumed, false);
    const r = await answer;
    assert.equal(r.session_id, o.session_id);
    assert.ok(r.payload.text.length > 0);
    assert.deepEqual(peer.frames.slice(0, 2).map((f) => f.type), ['session_opened', 'turn_started']);
    peer.ws.close();
  }
});
