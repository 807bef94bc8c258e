// The node link against a real ws server speaking the brain's side of /v1/node
// (test/helpers/hup-brain.ts): register and ack, heartbeats, readings as device_event, action round
// trips routed to the right device, timeouts, node_bye, reconnecting with backoff across a brain
// restart, a missing ack, and close 4001 ending the link as refused. The devices are small in-memory
// adapters (the serial adapter has its own tests against real ptys).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Value } from '@sinclair/typebox/value';
import fc from 'fast-check';
import { AdapterError, type AdapterLog, type AdapterSink, type DeviceAdapter } from '../../node-agent/adapters/adapter';
import { backoffMs, NodeLink, nodeSocketUrl, type LinkOptions, type LinkStatus } from '../../node-agent/link';
import { HUP_VERSION, NodeRegister, type DeviceManifest } from '../../protocol/node';
import { startHupBrain } from '../helpers/hup-brain';

const KEY = `svcdk_${'k'.repeat(43)}`;

/** A device whose actions answer from a table; `hang` never answers and ignores its signal. */
class TableDevice implements DeviceAdapter {
  sink: AdapterSink | null = null;
  readonly manifest: DeviceManifest;
  constructor(id: string, actions: string[], private readonly answers: Record<string, (p: Record<string, unknown>) => Record<string, unknown>>) {
    this.manifest = { device_id: id, device_type: 'test', name: id, transport: { kind: 'serial' }, capabilities: [id === 'lamp' ? 'led' : 'temperature'], actions: actions.map((name) => ({ name })) };
  }
  start(sink: AdapterSink): Promise<void> {
    this.sink = sink;
    return Promise.resolve();
  }
  run(action: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (action === 'hang') return new Promise(() => undefined);
    const answer = this.answers[action];
    return answer ? Promise.resolve(answer(params)) : Promise.reject(new AdapterError(`${this.manifest.device_id} refuses ${action}`));
  }
  status() {
    return { state: 'connected' as const, detail: 'in memory' };
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
}

interface Logged {
  msg: string;
  obj: Record<string, unknown>;
}

function recordingLog(): { log: AdapterLog; lines: Logged[] } {
  const lines: Logged[] = [];
  const push = (obj: object, msg: string): void => void lines.push({ msg, obj: obj as Record<string, unknown> });
  return { log: { debug: push, info: push, warn: push, error: push }, lines };
}

function makeLink(url: string, devices: DeviceAdapter[], over: Partial<LinkOptions> = {}): { link: NodeLink; lines: Logged[]; statuses: LinkStatus[]; acks: () => number } {
  const { log, lines } = recordingLog();
  const statuses: LinkStatus[] = [];
  let acks = 0;
  const link = new NodeLink({
    url: nodeSocketUrl(url),
    key: KEY,
    devices,
    log,
    uptimeS: () => 12.5,
    random: () => 1,
    onStatus: (s) => statuses.push(s),
    onFirstAck: () => acks++,
    register: () => ({ node_id: 'rpi-hall', node_type: 'rpi', capabilities: ['led', 'temperature'], device_manifest: devices.map((d) => d.manifest), agent_version: '0.1.0', uptime_s: 12.5 }),
    ...over,
  });
  for (const d of devices) void d.start({ reading: (e, data) => link.reading(d.manifest.device_id, e, data), status: () => undefined });
  return { link, lines, statuses, acks: () => acks };
}

async function until(check: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

void test('nodeSocketUrl and backoffMs: ws(s) path; 100 ms doubling to 30 s, the upper half jittered', () => {
  assert.equal(nodeSocketUrl('http://127.0.0.1:9090'), 'ws://127.0.0.1:9090/v1/node');
  assert.equal(nodeSocketUrl('https://brain.example/svc/'), 'wss://brain.example/svc/v1/node');
  assert.deepEqual([0, 1, 2, 3, 8, 9, 20].map((n) => backoffMs(n, () => 1)), [100, 200, 400, 800, 25_600, 30_000, 30_000]);
  assert.deepEqual([0, 9].map((n) => backoffMs(n, () => 0)), [50, 15_000]);
});

void test('register, ack, heartbeats, readings and actions routed to their device', { timeout: 30_000 }, async (t) => {
  const brain = await startHupBrain({ key: KEY, heartbeatMs: 100 });
  t.after(() => brain.stop());
  const lamp = new TableDevice('lamp', ['set_power', 'hang'], { set_power: (p) => ({ on: p.on }) });
  const thermo = new TableDevice('thermo', ['read_state'], { read_state: () => ({ celsius: 20.5 }) });
  const { link, acks } = makeLink(brain.url, [lamp, thermo]);
  t.after(() => link.stop());
  link.reading('thermo', 'temperature', { celsius: 19 }); // before the link: held
  link.start();

  const register = await brain.waitFor('node_register');
  assert.ok(Value.Check(NodeRegister, register.payload), JSON.stringify(register.payload));
  assert.equal(brain.upgrades[0]!.protocol, 'feral.hup.v1');
  assert.equal(brain.upgrades[0]!.authorization, `Bearer ${KEY}`);
  await until(() => link.status().state === 'linked', 'linked');
  assert.equal(acks(), 1);
  assert.match(link.status().detail, /^connected to ws:\/\/127\.0\.0\.1:\d+\/v1\/node$/);
  const held = await brain.waitFor('device_event');
  assert.deepEqual({ ...held.payload, ts: 0 }, { device_id: 'thermo', event_type: 'temperature', data: { celsius: 19 }, ts: 0 });
  const beat = await brain.waitFor('node_heartbeat');
  assert.equal(beat.payload.uptime_s, 12.5);

  lamp.sink!.reading('power', { watts: 3 });
  const event = await brain.waitFor('device_event', (f) => f.payload.device_id === 'lamp');
  assert.deepEqual(event.payload.data, { watts: 3 });

  const byId = await brain.request('set_power', { on: true }, { device_id: 'lamp' });
  assert.equal(byId.success, true);
  assert.deepEqual(byId.result, { on: true });
  assert.equal(byId.error, null);
  assert.equal(typeof byId.duration_ms, 'number');
  assert.deepEqual((await brain.request('read_state', {})).result, { celsius: 20.5 }, 'the one device that has the action');
  const refused = await brain.request('set_power', { on: 'x' }, { device_id: 'thermo' });
  assert.deepEqual([refused.success, refused.error], [false, 'thermo refuses set_power']);
  assert.equal((await brain.request('explode', {})).error, 'no device on this node has the action explode');
  assert.equal((await brain.request('read_state', {}, { device_id: 'garage' })).error, 'no device garage on this node');
  const hung = await brain.request('hang', {}, { timeout_ms: 150 });
  assert.deepEqual([hung.success, hung.error], [false, 'timed out after 150 ms']);
  assert.equal(brain.connections(), 1);

  await link.stop();
  await brain.waitFor('node_bye');
  assert.deepEqual(await Promise.race([link.done, sleep(2000, 'pending')]), { kind: 'stopped' });
});

void test('a brain restart: reconnects with doubling backoff and registers again; node_bye reconnects at once', { timeout: 30_000 }, async (t) => {
  const brain = await startHupBrain({ key: KEY, heartbeatMs: 200 });
  t.after(() => brain.stop());
  const thermo = new TableDevice('thermo', ['read_state'], { read_state: () => ({ celsius: 21 }) });
  const { link, lines, acks } = makeLink(brain.url, [thermo]);
  t.after(() => link.stop());
  link.start();
  await until(() => link.status().state === 'linked', 'linked');

  await brain.stop();
  const delays = (): number[] => lines.filter((l) => /reconnecting$/.test(l.msg)).map((l) => l.obj.delay_ms as number);
  await until(() => delays().length >= 4, 'four reconnect attempts');
  assert.deepEqual(delays().slice(0, 4), [100, 200, 400, 800]);
  assert.equal(link.status().state, 'waiting');
  thermo.sink!.reading('temperature', { celsius: 22 });
  thermo.sink!.reading('temperature', { celsius: 23 });
  await brain.restart();
  await until(() => brain.frames.filter((f) => f.type === 'node_register').length === 2, 'the second node_register');
  await until(() => link.status().state === 'linked', 'linked again');
  const flushed = await brain.waitFor('device_event', (f) => f.connection > 1);
  assert.deepEqual(flushed.payload.data, { celsius: 23 }, 'the latest held reading per event type');
  assert.equal((await brain.request('read_state', {})).success, true);
  assert.equal(acks(), 1, 'READY is said once per process');

  const before = brain.frames.filter((f) => f.type === 'node_register').length;
  brain.bye();
  await until(() => brain.frames.filter((f) => f.type === 'node_register').length === before + 1, 'a register after node_bye');
});

void test('close 4001: the link ends as refused and does not reconnect', { timeout: 20_000 }, async (t) => {
  const brain = await startHupBrain({ key: KEY });
  t.after(() => brain.stop());
  const { link } = makeLink(brain.url, []);
  link.start();
  await until(() => link.status().state === 'linked', 'linked');
  brain.revoke();
  const end = await link.done;
  assert.equal(end.kind, 'refused');
  assert.match(end.kind === 'refused' ? end.reason : '', /refused this node's key .*unknown or was revoked/);
  await sleep(400);
  assert.equal(brain.connections(), 1);
  assert.equal(link.healthy(), false);

  const wrong = makeLink(brain.url, [], { key: `svcdk_${'w'.repeat(43)}` });
  wrong.link.start();
  assert.equal((await wrong.link.done).kind, 'refused');
});

void test('no node_ack within the deadline: the socket is dropped and the node tries again', { timeout: 20_000 }, async (t) => {
  const brain = await startHupBrain({ key: KEY, silent: true });
  t.after(() => brain.stop());
  const { link, lines } = makeLink(brain.url, [], { ackTimeoutMs: 200 });
  t.after(() => link.stop());
  link.start();
  await until(() => brain.frames.filter((f) => f.type === 'node_register').length >= 2, 'a second register');
  assert.ok(lines.some((l) => /no node_ack within 200 ms/.test(l.msg)), lines.map((l) => l.msg).join('\n'));
  assert.notEqual(link.status().state, 'linked');
});

void test('property: backoff stays within [min/2, 30 s] and never shrinks in expectation', () => {
  fc.assert(
    fc.property(fc.nat({ max: 1000 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, r) => {
      const d = backoffMs(attempt, () => r);
      const base = Math.min(30_000, 100 * 2 ** Math.min(attempt, 30));
      assert.ok(d >= base / 2 - 1 && d <= base, `${attempt} ${r} → ${d}`);
      assert.ok(backoffMs(attempt + 1, () => 1) >= backoffMs(attempt, () => 1));
    }),
  );
});

void test('property: whatever the brain sends, the link stays up and still answers a valid request', { timeout: 60_000 }, async (t) => {
  const brain = await startHupBrain({ key: KEY });
  t.after(() => brain.stop());
  const lamp = new TableDevice('lamp', ['set_power'], { set_power: (p) => ({ on: p.on }) });
  const { link } = makeLink(brain.url, [lamp]);
  t.after(() => link.stop());
  link.start();
  await until(() => link.status().state === 'linked', 'linked');
  const type = fc.constantFrom('hup_action_request', 'node_ack', 'error', 'chat_response', 'command', 'execute', 'x_unknown', '');
  const payload = fc.oneof(
    fc.object({ maxDepth: 2 }),
    fc.record({ action_id: fc.string({ maxLength: 70 }), name: fc.string({ maxLength: 70 }), params: fc.oneof(fc.object({ maxDepth: 1 }), fc.constant(null)), timeout_ms: fc.oneof(fc.integer({ min: -5, max: 200 }), fc.constant('x')), device_id: fc.oneof(fc.constant('lamp'), fc.string({ maxLength: 5 })) }, { requiredKeys: [] }),
  );
  const frame = fc.oneof(
    fc.record({ hup_version: fc.constantFrom(HUP_VERSION, '1.0', '2.0.0', ''), type, ts: fc.oneof(fc.double(), fc.constant('now')), payload }).map((f) => JSON.stringify(f)),
    fc.string({ maxLength: 200 }),
    fc.json({ maxDepth: 3 }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(frame, { maxLength: 20 }), async (frames) => {
      for (const f of frames) brain.sendRaw(f);
      const answer = await brain.request('set_power', { on: true }, { device_id: 'lamp', timeout_ms: 1000 });
      assert.deepEqual([answer.success, answer.result], [true, { on: true }]);
      assert.equal(link.status().state, 'linked');
    }),
    { numRuns: 40 },
  );
  assert.equal(brain.connections(), 1, 'never reconnected');
});
