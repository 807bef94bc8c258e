// /v1/node under fuzz, black box: the built brain (dist/svc.mjs) with two paired nodes. One sends
// thousands of malformed frames from a seeded generator (bad JSON, binary, wrong versions, broken
// and hostile payloads, unknown types, oversize media, responses nobody asked for); meanwhile the
// other keeps a request/response loop going: its lamp is switched through /v1/session turns (the
// brain's set_device → hup_action_request → its hup_action_response) and it re-registers (node_ack).
// The brain must not crash, the second node must see every request and answer, and the hub must
// still register a new node at the end. The seed is printed; SVC_FUZZ_SEED repeats a run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import { connect as connectSession, waitForFrame } from '../helpers/session-client';
import { seeded } from '../helpers/prng';
import { HUP_VERSION, nodeFrame } from '../../protocol/node';

const FRAMES = 4000;
const BATCH = 100;

interface Frame {
  type: string;
  payload: Record<string, unknown>;
}

/** Pairs `nodeId` by the code flow (announce, claim with the API token, status) and returns its node key. */
async function nodeKey(brain: BrainProcess, nodeId: string, code: string): Promise<string> {
  const announce = await fetch(`${brain.url}/api/devices/pair/announce`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code, node_id: nodeId, name: nodeId }) });
  assert.equal(announce.status, 200, await announce.text());
  const claim = await brain.api('/api/devices/pair/code/claim', { method: 'POST', body: JSON.stringify({ code }) });
  assert.equal(claim.status, 200, await claim.text());
  const status = (await (await fetch(`${brain.url}/api/devices/pair/status?code=${code}&node_id=${nodeId}`)).json()) as { status: string; token?: string };
  assert.equal(status.status, 'paired');
  return status.token!;
}

class Node {
  readonly frames: Frame[] = [];
  private waiters: { type: string; resolve: (f: Frame) => void }[] = [];
  readonly closes: number[] = [];
  readonly closed: Promise<void>;

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => ws.once('close', () => resolve()));
    ws.on('message', (data: Buffer) => {
      const f = JSON.parse(data.toString('utf8')) as Frame;
      this.frames.push(f);
      const i = this.waiters.findIndex((w) => w.type === f.type);
      if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(f);
    });
    ws.on('close', (code: number) => this.closes.push(code));
  }

  static open(brain: BrainProcess, key: string, form: 'header' | 'query' = 'header'): Promise<Node> {
    const url = `ws://127.0.0.1:${brain.port}/v1/node${form === 'query' ? `?api_key=${encodeURIComponent(key)}` : ''}`;
    const ws = new WebSocket(url, ['feral.hup.v1'], { headers: form === 'header' ? { authorization: `Bearer ${key}` } : {} });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Node(ws)));
      ws.once('error', reject);
    });
  }

  next(type: string): Promise<Frame> {
    return new Promise((resolve) => this.waiters.push({ type, resolve }));
  }

  send(type: string, payload: unknown, version = HUP_VERSION): void {
    this.ws.send(JSON.stringify({ hup_version: version, type, ts: Date.now() / 1000, payload }));
  }

  async register(payload: Record<string, unknown>): Promise<Frame> {
    const ack = this.next('node_ack');
    this.send('node_register', payload);
    return ack;
  }

  /** A ping answered: the brain handled every frame sent before it. */
  pinged(): Promise<void> {
    return new Promise((resolve) => {
      this.ws.once('pong', () => resolve());
      this.ws.ping();
    });
  }
}

/** One malformed or hostile frame, picked by `random`. */
function junk(random: () => number, nodeId: string): { data: string | Buffer; binary: boolean } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));
  const text = (n: number): string => Array.from({ length: n }, () => String.fromCharCode(32 + Math.floor(random() * 95))).join('');
  const env = (type: string, payload: unknown, version: unknown = HUP_VERSION): string => JSON.stringify({ hup_version: version, type, ts: random() * 2e9, payload });
  const value = (): unknown => pick([null, true, -1, 1e308, '', text(20), [], {}, [1, 'a'], { a: { b: [] } }, 'x'.repeat(5000)]);
  const kind = Math.floor(random() * 16);
  switch (kind) {
    case 0:
      return { data: text(1 + Math.floor(random() * 200)), binary: false };
    case 1:
      return { data: bytes(1 + Math.floor(random() * 200)), binary: true };
    case 2:
      return { data: JSON.stringify(value()), binary: false };
    case 3:
      return { data: env('node_heartbeat', {}, pick(['2.0.0', '3', '', 'x', 1, null, '1.4.0.0.0'])), binary: false };
    case 4:
      return { data: env(pick(['node_register', 'node_heartbeat', 'device_event', 'hup_action_response', 'peripheral_bridge_register', 'chat_request', 'telemetry', 'sensor_telemetry', 'sensor_batch', 'register', 'execute_result']), value()), binary: false };
    case 5:
      return { data: env('device_event', { event_type: pick(['hrv', 'heart_rate', '', 'x'.repeat(70)]), data: { rmssd_ms: pick([0, 1000, -5, 'a', null]), bpm: value() } }), binary: false };
    case 6:
      // Over the media limits (64 KiB audio; 512 KiB video, sent less often: it is 700 kB on the wire).
      if (random() < 0.1) return { data: env('device_event', { event_type: pick(['video_frame', 'camera_frame']), data: { frame: 'A'.repeat(700_000) } }), binary: false };
      return { data: env('device_event', { event_type: 'audio_frame', data: { audio: 'A'.repeat(88_000 + Math.floor(random() * 10_000)) } }), binary: false };
    case 7:
      return { data: env('hup_action_response', { action_id: text(10), success: random() < 0.5, result: value() }), binary: false };
    case 8:
      return { data: env(`x_${text(8)}`, { any: value() }), binary: false };
    case 9:
      return { data: env('node_register', { node_id: pick(['other-node', nodeId, 'bad id', '']), node_type: pick(['rpi', 'toaster']), capabilities: pick([[], ['x'], 'x']) }), binary: false };
    case 10:
      return { data: `${'['.repeat(1 + Math.floor(random() * 5000))}${']'.repeat(Math.floor(random() * 5000))}`, binary: false };
    case 11:
      return { data: env('sensor_batch', { readings: Array.from({ length: Math.floor(random() * 50) }, () => ({ sensor: pick(['hrv', 'audio_frame', '', text(70)]), data: value(), rmssd_ms: value() })) }), binary: false };
    case 12:
      // Written as text: an object literal's __proto__ would set the prototype, not a key.
      return { data: `{"hup_version":"${HUP_VERSION}","type":"telemetry","ts":1,"payload":{"sensors":{"__proto__":${JSON.stringify(value())},"constructor":${JSON.stringify(value())},"hrv":{"rmssd_ms":1}}}}`, binary: false };
    case 13:
      return { data: JSON.stringify({ hup_version: HUP_VERSION, type: pick(['__proto__', 'constructor', 'toString']), ts: 1, payload: {} }), binary: false };
    case 14:
      return { data: env('chat_request', { session_id: pick(['', 's'.repeat(300)]), text: value() }), binary: false };
    default: {
      const valid = env('node_heartbeat', { battery_pct: 50 });
      const cut = Math.floor(random() * valid.length);
      return { data: valid.slice(0, cut) + text(3) + valid.slice(cut + 1), binary: false };
    }
  }
}

const LAMP = {
  node_id: 'lamp-node',
  node_type: 'actuator',
  capabilities: ['led'],
  device_manifest: {
    device_id: 'lamp',
    device_type: 'light',
    name: 'lamp',
    transport: { kind: 'local' },
    actions: [{ name: 'set_power', category: 'actuator', permission_tier: 'active', rate_limit_per_minute: 6000, params: [{ name: 'on', type: 'boolean', required: true }] }],
  },
};

void test('fuzz: thousands of malformed frames from one node; the other keeps its request/response loop; the brain lives', { timeout: 180_000 }, async (t) => {
  const seed = Number(process.env.SVC_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
  t.diagnostic(`seed ${seed} (SVC_FUZZ_SEED=${seed} repeats this run)`);
  const random = seeded(seed);
  const home = tempHome('svc-node-fuzz-');
  // A flood limit the fuzzer stays under, so that its frames are parsed rather than dropped (the limit has its own tests).
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ hardware: { flood: { frames: 1_000_000, per_ms: 1000 } } }));
  const brain = await startBrain({ home });
  t.after(() => brain.kill());

  const fuzzKey = await nodeKey(brain, 'fuzz-node', '111111');
  const lampKey = await nodeKey(brain, 'lamp-node', '222222');
  const fuzzer = await Node.open(brain, fuzzKey);
  await fuzzer.register({ node_id: 'fuzz-node', node_type: 'sensor', capabilities: ['temperature'] });
  const lamp = await Node.open(brain, lampKey);
  await lamp.register(LAMP);

  // The lamp answers every request it gets.
  let requests = 0;
  lamp.ws.on('message', (data: Buffer) => {
    const f = JSON.parse(data.toString('utf8')) as Frame;
    if (f.type !== 'hup_action_request') return;
    requests++;
    lamp.ws.send(nodeFrame('hup_action_response', { action_id: f.payload.action_id, success: true, result: { on: f.payload.params } }));
  });

  const session = await connectSession(brain);
  const opened = session.next('session_opened');
  session.ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  const sessionId = (await opened).session_id;

  let fuzzing = true;
  let turns = 0;
  let reacks = 0;
  const loop = (async () => {
    while (fuzzing) {
      const from = session.frames.length;
      session.ws.send(JSON.stringify({ type: 'text_command', session_id: sessionId, payload: { text: `turn ${turns % 2 === 0 ? 'on' : 'off'} the lamp` } }));
      await waitForFrame(session.ws, session.frames, 'text_response', () => true, from);
      turns++;
      const ack = await lamp.register(LAMP);
      assert.equal(ack.payload.node_id, 'lamp-node');
      reacks++;
    }
  })();

  let sent = 0;
  let reconnects = 0;
  let node = fuzzer;
  while (sent < FRAMES) {
    for (let i = 0; i < BATCH && sent < FRAMES; i++, sent++) {
      const frame = junk(random, 'fuzz-node');
      node.ws.send(frame.data, { binary: frame.binary });
    }
    await Promise.race([node.pinged(), node.closed]);
    if (node.ws.readyState !== WebSocket.OPEN) {
      // Only a frame over 1 MiB closes a node (1009); none here is, so count and go on.
      reconnects++;
      node = await Node.open(brain, fuzzKey);
      await node.register({ node_id: 'fuzz-node', node_type: 'sensor', capabilities: ['temperature'] });
    }
  }
  fuzzing = false;
  await loop;

  t.diagnostic(`${sent} junk frames; ${turns} lamp turns, ${requests} requests answered, ${reacks} re-acks alongside; ${reconnects} fuzzer reconnects`);
  assert.equal(brain.child.exitCode, null, 'the brain is running');
  assert.equal(reconnects, 0, `the fuzzer's socket was closed: ${fuzzer.closes.join(', ')}`);
  assert.ok(turns >= 1 && requests >= turns, `every lamp turn reached the lamp (${turns} turns, ${requests} requests)`);
  const errors = node.frames.filter((f) => f.type === 'error').map((f) => f.payload.code as number);
  assert.ok(errors.length > FRAMES / 2, `the junk was answered with errors (${errors.length})`);
  assert.ok(errors.every((c) => [1002, 1003, 1006, 4020].includes(c)), `only frame errors, no internal ones: ${[...new Set(errors)].join(', ')}`);

  // The hub still answers: a node that registers now (with its key in the deprecated ?api_key= form) is
  // acknowledged, a wrong key is refused with 4001, /health is fine, and neither key reaches the log.
  const late = await Node.open(brain, fuzzKey, 'query');
  assert.equal((await late.register({ node_id: 'fuzz-node', node_type: 'sensor', capabilities: [] })).payload.node_id, 'fuzz-node');
  const wrong = await Node.open(brain, 'svcdk_not-a-key-of-this-brain', 'query');
  await wrong.closed;
  assert.deepEqual(wrong.closes, [4001]);
  assert.equal((await fetch(`${brain.url}/health`)).status, 200);
  session.ws.close();

  // The log, read whole once the brain has exited (it writes asynchronously).
  const stdioClosed = new Promise((resolve) => brain.child.once('close', resolve));
  assert.equal(await brain.stop(), 0);
  await stdioClosed;
  assert.ok(!brain.lines.some((l) => l.includes('"level":50') || l.includes('"level":60')), 'nothing logged at error');
  assert.ok(brain.lines.some((l) => l.includes('?api_key=')), 'the deprecated key form is noted');
  for (const key of [fuzzKey, lampKey, 'svcdk_not-a-key-of-this-brain']) assert.ok(!brain.lines.some((l) => l.includes(key)), 'a node key reached the log');
});
