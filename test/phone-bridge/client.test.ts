// The phone's side of /v1/node against a real WebSocket server on loopback that plays the brain: the
// upgrade's credential and subprotocol, node_register then node_ack, peripheral_bridge_register sent
// again before it expires, heartbeats, hup_action_request answered from the peripheral named by
// params.device_id with state that survives a reconnect, readings as device_event, chat, node_bye,
// reconnect after a dropped link, and the two refusals that end the bridge (HTTP 401, close 4001).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { HUP_SUBPROTOCOL, nodeFrame } from '../../protocol/node';
import { BridgeClient, LinkDown, nodeUrl, type BridgeClientOptions } from '../../phone-bridge/client';
import { DEMO_PERIPHERALS, PeripheralSet, type PeripheralsFile } from '../../phone-bridge/peripherals';

const KEY = `svcdk_${'k'.repeat(43)}`;

interface Frame {
  type: string;
  payload: Record<string, unknown>;
}

/** One accepted socket: its frames in order, and a waiter for the next of a type. */
class Peer {
  readonly frames: Frame[] = [];
  private read = 0;
  private wake: (() => void) | null = null;
  readonly closed: Promise<number>;

  constructor(
    readonly ws: WebSocket,
    readonly request: IncomingMessage,
  ) {
    ws.on('message', (d: Buffer) => {
      this.frames.push(JSON.parse(d.toString()) as Frame);
      this.wake?.();
    });
    this.closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
  }

  /** The next frame of `type` after the last one taken (others are skipped). */
  async next(type: string): Promise<Frame['payload']> {
    for (;;) {
      while (this.read < this.frames.length) {
        const f = this.frames[this.read++]!;
        if (f.type === type) return f.payload;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  send(type: string, payload: Record<string, unknown>): void {
    this.ws.send(nodeFrame(type, payload));
  }

  /** Acks the register and returns it. */
  async accept(heartbeatMs = 100): Promise<Frame['payload']> {
    const register = await this.next('node_register');
    this.send('node_ack', { node_id: register.node_id, session_token: 'st', heartbeat_ms: heartbeatMs, server_time: Date.now() / 1000, granted_capabilities: ['led'], denied_capabilities: [] });
    return register;
  }

  async act(name: string, params: Record<string, unknown>, id = `a_${name}_${this.frames.length}`): Promise<Frame['payload']> {
    this.send('hup_action_request', { action_id: id, name, params, timeout_ms: 1000 });
    for (;;) {
      const response = await this.next('hup_action_response');
      if (response.action_id === id) return response;
    }
  }
}

async function fakeBrain(t: { after(fn: () => unknown): void }, refuse = false) {
  const peers: Peer[] = [];
  let waiting: (() => void) | null = null;
  const server = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    path: '/v1/node',
    handleProtocols: (protocols) => (protocols.has(HUP_SUBPROTOCOL) ? HUP_SUBPROTOCOL : false),
    verifyClient: (_info, done) => done(!refuse, 401),
  });
  server.on('connection', (ws, req) => {
    const peer = new Peer(ws, req);
    peers.push(peer);
    waiting?.();
  });
  await new Promise((resolve) => server.once('listening', resolve));
  t.after(() => {
    for (const c of server.clients) c.terminate();
    return new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    peers,
    /** The connection number `n` (0-based), now or when it comes. */
    peer: (n: number): Promise<Peer> => (peers[n] ? Promise.resolve(peers[n]) : new Promise((resolve) => (waiting = () => peers.length > n && resolve(peers[n]!)))),
  };
}

function client(url: string, over: Partial<BridgeClientOptions> = {}, file: PeripheralsFile = DEMO_PERIPHERALS): { bridge: BridgeClient; logs: string[] } {
  const logs: string[] = [];
  const bridge = new BridgeClient({
    brainUrl: url,
    identity: { nodeId: 'phone-kitchen', key: KEY, name: 'Kitchen phone', bridgeId: 'kitchen-bridge', platform: 'ios' },
    peripherals: new PeripheralSet(file),
    bridgeTtlMs: 200,
    random: () => 0,
    now: Date.now,
    log: (line) => {
      logs.push(line);
      if (process.env.PB_DEBUG) process.stderr.write(`${line}\n`);
    },
    ...over,
  });
  return { bridge, logs };
}

void test('nodeUrl: http → ws, https → wss, at /v1/node under any base path', () => {
  assert.equal(nodeUrl('http://127.0.0.1:9090'), 'ws://127.0.0.1:9090/v1/node');
  assert.equal(nodeUrl('https://brain.example/svc/'), 'wss://brain.example/svc/v1/node');
});

void test('register, ack, bridge registered and renewed before it expires, heartbeats; actions by params.device_id change state the next read sees', { timeout: 20_000 }, async (t) => {
  const brain = await fakeBrain(t);
  const { bridge } = client(brain.url);
  const ran = bridge.run();
  t.after(() => bridge.stop());
  const peer = await brain.peer(0);
  assert.equal(peer.request.headers.authorization, `Bearer ${KEY}`);
  assert.equal(peer.ws.protocol, HUP_SUBPROTOCOL);
  const register = await peer.accept();
  assert.equal(register.node_type, 'phone');
  assert.equal(register.node_id, 'phone-kitchen');
  assert.deepEqual((register.capabilities as string[]).sort(), ['battery', 'heart_rate', 'led']);
  assert.deepEqual(register.device_manifest, { device_id: 'phone_kitchen', device_type: 'phone', name: 'Kitchen phone', capabilities: [], actions: [] }, 'the phone itself has no actions');

  const first = await peer.next('peripheral_bridge_register');
  assert.equal(first.bridge_id, 'kitchen-bridge');
  assert.equal(first.platform, 'ios');
  const devices = first.devices as { device_id: string; kind: string; status: string; manifest: { transport: { kind: string }; actions: { name: string; effect?: unknown }[] } }[];
  assert.deepEqual(devices.map((d) => [d.device_id, d.kind, d.status, d.manifest.transport.kind]), [['bulb', 'light', 'connected', 'phone_ble'], ['hr_strap', 'heart_rate_monitor', 'connected', 'phone_ble']]);
  assert.deepEqual(devices[0]!.manifest.actions.map((a) => [a.name, 'effect' in a]), [['set_power', false], ['get_state', false]], 'the simulation is not on the wire');
  await peer.next('node_heartbeat');
  const renewed = await peer.next('peripheral_bridge_register');
  assert.ok((renewed.expires_at as number) > (first.expires_at as number), 'renewed with a later expires_at');
  assert.ok((renewed.expires_at as number) - Date.now() / 1000 > 0, 'before the previous one expired the next is sent');

  assert.deepEqual(await peer.act('get_state', { device_id: 'bulb' }).then((r) => [r.success, r.result]), [true, { on: false, brightness: 80 }]);
  const on = await peer.act('set_power', { device_id: 'bulb', on: true });
  assert.deepEqual([on.success, on.result, on.error], [true, { on: true, brightness: 80 }, null]);
  assert.equal(typeof on.duration_ms, 'number');
  assert.deepEqual((await peer.act('get_state', { device_id: 'bulb' })).result, { on: true, brightness: 80 });
  const refusals = [
    await peer.act('set_power', { device_id: 'bulb', on: 'yes' }),
    await peer.act('set_power', { device_id: 'bulb' }),
    await peer.act('explode', { device_id: 'bulb' }),
    await peer.act('set_power', { device_id: 'toaster', on: true }),
    await peer.act('set_power', { on: true }),
  ];
  assert.deepEqual(refusals.map((r) => [r.success, r.error]), [
    [false, 'set_power: parameter on must be boolean'],
    [false, 'set_power: parameter on is required'],
    [false, 'bulb has no action explode'],
    [false, 'no peripheral toaster on this bridge'],
    [false, 'the request names no device_id'],
  ]);
  peer.send('hup_action_request', { action_id: 'a_bad', params: {} });
  const unreadable = await peer.next('hup_action_response');
  assert.equal(unreadable.action_id, 'a_bad');
  assert.match(String(unreadable.error), /^unreadable request: hup_action_request: \/name/);
  assert.deepEqual((await peer.act('get_state', { device_id: 'bulb' })).result, { on: true, brightness: 80 }, 'refused actions changed nothing');
  peer.send('hup_action_request', { action_id: 'a_top', name: 'set_power', device_id: 'bulb', params: { on: false } });
  assert.equal((await peer.next('hup_action_response')).success, true, 'the svc device_id beside params is read too');

  bridge.stop();
  assert.deepEqual(await peer.next('node_bye'), { reason: 'bridge stopped' });
  assert.equal(await peer.closed, 1000);
  assert.deepEqual(await ran, { reason: 'stopped' });
});

void test('readings go out as device_event with device_id; a dropped link reconnects and keeps the peripherals state; node_bye reconnects too', { timeout: 20_000 }, async (t) => {
  const brain = await fakeBrain(t);
  const file: PeripheralsFile = { peripherals: [{ ...DEMO_PERIPHERALS.peripherals[1]!, readings: [{ event_type: 'heart_rate', field: 'bpm', every_ms: 20, min: 55, max: 95, step: 3 }] }, DEMO_PERIPHERALS.peripherals[0]!] };
  let r = 0;
  const { bridge, logs } = client(brain.url, { random: () => (r = (r + 0.37) % 1) }, file);
  const ran = bridge.run();
  t.after(() => bridge.stop());
  const peer = await brain.peer(0);
  await peer.accept();
  const events = [await peer.next('device_event'), await peer.next('device_event'), await peer.next('device_event')];
  for (const e of events) {
    assert.deepEqual([e.node_id, e.device_id, e.event_type], ['phone-kitchen', 'hr_strap', 'heart_rate']);
    const bpm = (e.data as { bpm: number }).bpm;
    assert.ok(Number.isInteger(bpm) && bpm >= 55 && bpm <= 95, `bpm ${bpm}`);
  }
  const read = await peer.act('read_heart_rate', { device_id: 'hr_strap' });
  assert.equal(typeof (read.result as { bpm: number }).bpm, 'number', 'the last reading is the state');
  assert.equal((await peer.act('set_power', { device_id: 'bulb', on: true })).success, true);

  peer.ws.terminate();
  const second = await brain.peer(1);
  await second.accept();
  await second.next('peripheral_bridge_register');
  assert.deepEqual((await second.act('get_state', { device_id: 'bulb' })).result, { on: true, brightness: 80 }, 'state survives the reconnect');
  assert.ok(logs.some((l) => /^link down; reconnecting in \d+ ms$/.test(l)), logs.join('\n'));

  second.send('node_bye', { reason: 'brain restarting' });
  assert.equal(await second.closed, 1000);
  const third = await brain.peer(2);
  await third.accept();
  assert.ok(logs.includes('the brain said node_bye (brain restarting)'));
  bridge.stop();
  assert.deepEqual(await ran, { reason: 'stopped' });
});

void test('chat: chat_request in the session, partial and final chat_response; a chat with the link down is refused at once', { timeout: 20_000 }, async (t) => {
  const brain = await fakeBrain(t);
  const { bridge } = client(brain.url, { peripherals: null });
  await assert.rejects(bridge.chat('s1', 'hello'), LinkDown);
  const ran = bridge.run();
  t.after(() => bridge.stop());
  const peer = await brain.peer(0);
  await peer.accept();
  assert.equal((await bridge.registered()).node_id, 'phone-kitchen');
  const partials: string[] = [];
  const answer = bridge.chat('s1', 'is the bulb on?', (p) => partials.push(p));
  assert.deepEqual(await peer.next('chat_request'), { session_id: 's1', text: 'is the bulb on?', reply_mode: 'stream' });
  peer.send('chat_response', { session_id: 'other', text: 'not for you', final: true });
  peer.send('chat_response', { session_id: 's1', text: 'Let me look', final: false });
  peer.send('chat_response', { session_id: 's1', text: 'It is off.', final: true });
  assert.equal(await answer, 'It is off.');
  assert.deepEqual(partials, ['Let me look']);
  const lost = bridge.chat('s1', 'and now?');
  await peer.next('chat_request');
  peer.ws.terminate();
  await assert.rejects(lost, /the link closed \(1006\) before the answer/);
  bridge.stop();
  await ran;
});

void test('the brain refuses the key: close 4001 ends the bridge "unauthorized"; so does a 401 on the upgrade; 4003 ends it "superseded"', { timeout: 20_000 }, async (t) => {
  const brain = await fakeBrain(t);
  const { bridge } = client(brain.url);
  const ran = bridge.run();
  const peer = await brain.peer(0);
  await peer.next('node_register');
  peer.send('error', { code: 1001, name: 'unauthorized', message: 'node key revoked', recoverable: false, ref_action_id: null });
  peer.ws.close(4001, 'unauthorized');
  const end = await ran;
  assert.equal(end.reason, 'unauthorized');
  assert.equal(brain.peers.length, 1, 'no reconnect after 4001');

  const refusing = await fakeBrain(t, true);
  const { bridge: refused } = client(refusing.url);
  assert.deepEqual(await refused.run(), { reason: 'unauthorized', detail: 'the brain refused the node key (HTTP 401)' });

  const other = await fakeBrain(t);
  const { bridge: replaced } = client(other.url);
  const replacedRun = replaced.run();
  const p = await other.peer(0);
  await p.accept();
  p.send('error', { code: 1005, name: 'node_id_conflict', message: 'superseded', recoverable: false, ref_action_id: null });
  p.ws.close(4003, 'superseded');
  const ended = await replacedRun;
  assert.equal(ended.reason, 'superseded');
  assert.match(ended.reason === 'superseded' ? ended.detail : '', /4003 \(superseded\)/);
});
