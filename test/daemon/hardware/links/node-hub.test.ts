// NodeHub on a real listening app with real `ws` clients (node-protocol.md, rule by rule): credentials,
// handshake, liveness, one socket per node, errors that keep the socket open, limits, action
// requests, phone frames, listener bugs, stop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeUnreachable } from '../../../../daemon/hardware/links/node-links';
import { NodeBusy, MAX_PENDING_PER_NODE } from '../../../../daemon/hardware/links/node-connection';
import { disconnectCodes } from '../../../../daemon/hardware/links/node-hub';
import { ADMIN_KEY, DEVICE_KEY, KEYS, PEER_KEY, hubRig, levelOf, type NodePeer, type RecordingListener } from './node-rig';

const action = (id: string, timeout_ms?: number) => ({ action_id: id, name: 'set_led', params: { on: true }, ...(timeout_ms ? { timeout_ms } : {}) });

/** Sends a heartbeat and waits until the listener has it: every earlier frame of this socket was handled. */
async function roundTrip(peer: NodePeer, listener: RecordingListener, nodeId: string): Promise<void> {
  const marker = Math.random();
  const seen = listener.next('heartbeat', (a) => a[0] === nodeId && a[1].uptime_s === marker);
  peer.send('node_heartbeat', { uptime_s: marker });
  await seen;
}

/**
 * A WebSocket ping answered: the brain handled every frame sent before it (ws handles a connection's
 * frames in order, and the hub handles each synchronously) and every frame it sent before the pong
 * has arrived. Pings are control frames: they count against no limit.
 */
function pinged(peer: NodePeer): Promise<void> {
  return new Promise((resolve) => {
    peer.ws.once('pong', () => resolve());
    peer.ws.ping();
  });
}

void test('a socket without a node key gets error 1001 and close 4001: none, unknown, admin, device, peer', async (t) => {
  const { connect, hub, logs } = await hubRig(t);
  for (const key of [null, 'nobody-knows-this-key', ADMIN_KEY, DEVICE_KEY, PEER_KEY]) {
    const peer = await connect({ key });
    const closed = await peer.closed;
    assert.equal(closed.code, 4001, String(key));
    assert.equal(closed.reason, 'unauthorized');
    const [error] = peer.errors();
    assert.equal(error?.payload.code, 1001);
    assert.equal(error?.payload.name, 'unauthorized');
  }
  assert.equal(hub.connected(), 0);
  const refusals = logs.filter((l) => l.includes('node socket refused'));
  assert.equal(refusals.length, 5);
  assert.ok(refusals.every((l) => levelOf(l) === 40));
  for (const key of ['nobody-knows-this-key', ADMIN_KEY, DEVICE_KEY, PEER_KEY]) assert.ok(!logs.join('').includes(key), 'a key reached the log');
});

void test('three credential forms: Bearer header, feral-token- subprotocol (answered feral.hup.v1), ?api_key=', async (t) => {
  const { connect } = await hubRig(t);
  const viaHeader = await connect();
  assert.equal((await viaHeader.register('pi-1')).payload.node_id, 'pi-1');
  const viaProtocol = await connect({ key: null, protocols: ['feral.hup.v1', `feral-token-${KEYS['pi-2']}`] });
  assert.equal(viaProtocol.ws.protocol, 'feral.hup.v1');
  assert.equal((await viaProtocol.register('pi-2')).payload.node_id, 'pi-2');
  const viaQuery = await connect({ key: null, query: `?api_key=${KEYS.phone}` });
  assert.equal((await viaQuery.register('phone')).payload.node_id, 'phone');
});

void test('first hit wins: a bad Bearer header is refused even when the subprotocol carries a good key', async (t) => {
  const { connect } = await hubRig(t);
  const peer = await connect({ key: 'wrong-key', protocols: [`feral-token-${KEYS['pi-1']}`] });
  assert.equal((await peer.closed).code, 4001);
  const good = await connect({ key: KEYS['pi-1'], query: '?api_key=wrong-key' });
  assert.equal((await good.register('pi-1')).type, 'node_ack');
});

void test('a key given as ?api_key= never reaches the log, accepted or refused', async (t) => {
  const { connect, logs } = await hubRig(t);
  const peer = await connect({ key: null, query: `?api_key=${KEYS['pi-1']}` });
  await peer.register('pi-1');
  peer.sendRaw('not json');
  await peer.next('error');
  const refused = await connect({ key: null, query: '?api_key=secret-but-wrong-0123' });
  await refused.closed;
  peer.send('node_bye', {});
  await peer.closed;
  assert.ok(logs.some((l) => l.includes('deprecated: use Authorization')), 'the deprecated form is noted');
  const all = logs.join('');
  assert.ok(!all.includes(KEYS['pi-1']) && !all.includes('secret-but-wrong-0123'), 'a key reached the log');
});

void test('the first frame must be node_register: anything else is error 1002 and close 4002', async (t) => {
  const { connect, listener } = await hubRig(t);
  for (const send of [(p: NodePeer) => p.send('node_heartbeat', {}), (p: NodePeer) => p.sendRaw('{oops'), (p: NodePeer) => p.send('node_register', { node_id: 'pi-1', node_type: 'rpi', capabilities: [] }, '2.0.0')]) {
    const peer = await connect();
    send(peer);
    const closed = await peer.closed;
    assert.equal(closed.code, 4002);
    assert.equal(peer.errors(1002).length, 1);
  }
  assert.equal(listener.of('registered').length, 0);
});

void test('no node_register before the deadline: close 4002', async (t) => {
  const { connect } = await hubRig(t, { ackDeadlineMs: 50 });
  const peer = await connect();
  assert.equal((await peer.closed).code, 4002);
});

void test('node_ack carries node_id, an opaque session_token, heartbeat_ms, server_time and the capabilities', async (t) => {
  const { node, clock, listener, hub } = await hubRig(t, { heartbeatMs: 7000 });
  const { ack } = await node('pi-1');
  assert.equal(ack.payload.node_id, 'pi-1');
  assert.equal(typeof ack.payload.session_token, 'string');
  assert.ok((ack.payload.session_token as string).length >= 16);
  assert.equal(ack.payload.heartbeat_ms, 7000);
  assert.equal(ack.payload.server_time, clock.now() / 1000);
  assert.deepEqual(ack.payload.granted_capabilities, ['temperature', 'led', 'set_led', 'read_temperature']);
  assert.deepEqual(ack.payload.denied_capabilities, ['camera']);
  const registered = listener.of('registered')[0]![0];
  assert.deepEqual({ nodeId: registered.nodeId, heartbeatMs: registered.heartbeatMs, connectedAt: registered.connectedAt }, { nodeId: 'pi-1', heartbeatMs: 7000, connectedAt: clock.now() });
  assert.deepEqual(registered.register.capabilities, ['temperature', 'led']);
  assert.equal(hub.connected(), 1);
  assert.ok(hub.online('pi-1'));
  const { ack: second } = await node('pi-2');
  assert.notEqual(second.payload.session_token, ack.payload.session_token);
});

void test('a node_register naming another node than the key: 1003 capability_denied and close 4003', async (t) => {
  const { connect, hub } = await hubRig(t);
  const peer = await connect({ key: KEYS['pi-1'] });
  peer.send('node_register', { node_id: 'pi-2', node_type: 'rpi', capabilities: [] });
  assert.equal((await peer.closed).code, 4003);
  const [error] = peer.errors(1003);
  assert.equal(error?.payload.name, 'capability_denied');
  assert.equal(hub.online('pi-2'), false);
});

void test('a registered socket may re-register its own id (re-ack, same token) but not change it (1003, stays)', async (t) => {
  const { node, listener } = await hubRig(t);
  const { peer, ack } = await node('pi-1');
  const again = await peer.register('pi-1');
  assert.equal(again.payload.session_token, ack.payload.session_token);
  peer.send('node_register', { node_id: 'pi-2', node_type: 'rpi', capabilities: [] });
  const error = await peer.next('error');
  assert.equal(error.payload.code, 1003);
  assert.equal(error.payload.recoverable, true);
  await roundTrip(peer, listener, 'pi-1');
  assert.equal(listener.of('disconnected').length, 0);
});

void test('no inbound frame for 3 heartbeats: close 4004 stale_heartbeat, and the listener hears it', async (t) => {
  const { node, clock, listener, hub } = await hubRig(t, { heartbeatMs: 40 });
  const { peer } = await node('pi-1');
  clock.advance(121);
  const closed = await peer.closed;
  assert.deepEqual(closed, { code: 4004, reason: 'stale_heartbeat' });
  const [nodeId, reason, , superseded] = await listener.next('disconnected');
  assert.deepEqual([nodeId, reason, superseded], ['pi-1', 'stale_heartbeat', false]);
  assert.equal(hub.connected(), 0);
});

void test('a second socket for the same node supersedes the first: 1005, close 4003, its requests rejected', async (t) => {
  const { node, hub, listener } = await hubRig(t);
  const first = await node('pi-1');
  const waiting = assert.rejects(hub.request('pi-1', action('a1')), (err: unknown) => err instanceof NodeUnreachable && err.reason === 'disconnected');
  await first.peer.next('hup_action_request');
  const second = await node('pi-1');
  assert.equal(second.ack.type, 'node_ack');
  const closed = await first.peer.closed;
  assert.deepEqual(closed, { code: 4003, reason: 'superseded' });
  assert.equal(first.peer.errors(1005)[0]?.payload.name, 'node_id_conflict');
  await waiting;
  const gone = listener.of('disconnected');
  assert.equal(gone.length, 1);
  assert.deepEqual([gone[0]![0], gone[0]![1], gone[0]![3]], ['pi-1', 'superseded', true]);
  assert.equal(hub.connected(), 1);
  assert.ok(hub.online('pi-1'));
  // The node still answers on its new socket.
  const next = hub.request('pi-1', action('a2'));
  const request = await second.peer.next('hup_action_request');
  second.peer.send('hup_action_response', { action_id: request.payload.action_id, success: true });
  assert.equal((await next).success, true);
});

void test('node_bye: close 1000, and the listener hears bye', async (t) => {
  const { node, listener, hub } = await hubRig(t);
  const { peer } = await node('pi-1');
  peer.send('node_bye', { reason: 'shutting down' });
  assert.equal((await peer.closed).code, 1000);
  const [nodeId, reason, , superseded] = await listener.next('disconnected');
  assert.deepEqual([nodeId, reason, superseded], ['pi-1', 'bye', false]);
  assert.equal(hub.online('pi-1'), false);
});

void test('deprecated aliases are accepted and logged once per node', async (t) => {
  const { connect, listener, logs, hub } = await hubRig(t);
  const peer = await connect();
  peer.send('register', { node_id: 'pi-1', node_type: 'rpi', capabilities: [] });
  await peer.next('node_ack');
  peer.send('heartbeat', { battery_pct: 80 });
  peer.send('heartbeat', { battery_pct: 79 });
  await listener.next('heartbeat', (a) => a[1].battery_pct === 79);
  const waiting = hub.request('pi-1', action('old-1'));
  await peer.next('hup_action_request');
  peer.send('execute_result', { request_id: 'old-1', success: true, result: { ok: 1 } });
  const response = await waiting;
  assert.equal(response.action_id, 'old-1');
  assert.deepEqual(response.result, { ok: 1 });
  const notes = (alias: string) => logs.filter((l) => l.includes('deprecated message name') && l.includes(`"deprecated":"${alias}"`)).length;
  assert.deepEqual([notes('register'), notes('heartbeat'), notes('execute_result')], [1, 1, 1]);
});

void test('unknown message types are ignored (no error, socket stays) and logged once per type', async (t) => {
  const { node, logs } = await hubRig(t);
  const { peer } = await node('pi-1');
  peer.send('genui_event', { x: 1 });
  peer.send('genui_event', { x: 2 });
  peer.send('from_the_future', {});
  await pinged(peer);
  assert.equal(peer.errors().length, 0);
  assert.equal(logs.filter((l) => l.includes('does not read') && l.includes('genui_event')).length, 1);
  assert.equal(logs.filter((l) => l.includes('does not read') && l.includes('from_the_future')).length, 1);
  // A node inventing names gets 64 of them logged, then one line that says no more are.
  for (let i = 0; i < 80; i++) peer.send(`invented_${i}`, {});
  await pinged(peer);
  assert.equal(logs.filter((l) => l.includes('does not read')).length, 64);
  assert.equal(logs.filter((l) => l.includes('no more are logged')).length, 1);
});

void test('errors on an open socket keep it open: 2.x version, bad JSON, binary (1002), bad payload (1003 with ref)', async (t) => {
  const { node, listener } = await hubRig(t);
  const { peer } = await node('pi-1');
  peer.send('node_heartbeat', {}, '2.1.0');
  peer.sendRaw('{not json');
  peer.sendRaw(Buffer.from([1, 2, 3]), true);
  peer.send('device_event', { event_type: 'heart_rate' });
  await roundTrip(peer, listener, 'pi-1');
  await pinged(peer);
  assert.deepEqual(peer.errors().map((e) => e.payload.code), [1002, 1002, 1002, 1003]);
  assert.equal(peer.errors(1003)[0]?.payload.ref_action_id, 'device_event');
  assert.ok(peer.errors().every((e) => e.payload.recoverable === true));
  assert.equal(listener.of('heartbeat').length, 1);
});

void test('media over its limit is 4020 and dropped; hrv out of range is 1003; the socket stays', async (t) => {
  const { node, listener } = await hubRig(t);
  const { peer } = await node('pi-1');
  peer.send('device_event', { event_type: 'audio_frame', data: { audio: Buffer.alloc(64 * 1024 + 1).toString('base64') } });
  peer.send('device_event', { event_type: 'hrv', data: { rmssd_ms: 400 } });
  peer.send('device_event', { event_type: 'audio_frame', data: { audio: Buffer.alloc(1000).toString('base64') } });
  peer.send('device_event', { event_type: 'hrv', data: { rmssd_ms: 45 } });
  await pinged(peer);
  assert.deepEqual(peer.errors().map((e) => [e.payload.code, e.payload.name]), [[4020, 'frame_too_large'], [1003, 'bad_payload']]);
  assert.deepEqual(listener.of('deviceEvent').map((a) => a[1].event_type), ['audio_frame', 'hrv']);
});

void test('legacy telemetry reaches the listener as device_events', async (t) => {
  const { node, listener } = await hubRig(t);
  const { peer } = await node('pi-1');
  peer.send('telemetry', { sensors: { temperature: { celsius: 21 } } });
  peer.send('sensor_telemetry', { sensor: 'heart_rate', data: { bpm: 66 } });
  peer.send('sensor_batch', { readings: [{ sensor: 'steps', data: { count: 12 } }] });
  await listener.next('deviceEvent', (a) => a[1].event_type === 'steps');
  assert.deepEqual(listener.of('deviceEvent').map((a) => [a[0], a[1].event_type, a[1].data]), [
    ['pi-1', 'temperature', { celsius: 21 }],
    ['pi-1', 'heart_rate', { bpm: 66 }],
    ['pi-1', 'steps', { count: 12 }],
  ]);
});

void test('a flood is dropped with one 1004 per second, the socket kept; ten times over closes it', async (t) => {
  const { node, listener, clock } = await hubRig(t, { floodLimit: { frames: 5, perMs: 1000 } });
  const { peer } = await node('pi-1'); // one frame of the window
  for (let i = 0; i < 20; i++) peer.send('node_heartbeat', { uptime_s: i });
  await pinged(peer);
  assert.deepEqual(listener.of('heartbeat').map((a) => a[1].uptime_s), [0, 1, 2, 3]);
  assert.equal(peer.errors(1004).length, 1);
  assert.equal(peer.errors(1004)[0]?.payload.name, 'rate_limited');
  assert.equal(peer.errors(1004)[0]?.payload.recoverable, true);
  clock.advance(1000);
  await roundTrip(peer, listener, 'pi-1');
  for (let i = 0; i < 60; i++) peer.send('node_heartbeat', {});
  const closed = await peer.closed;
  assert.deepEqual(closed, { code: 1008, reason: 'rate_limited' });
  assert.deepEqual(peer.errors(1004).map((e) => e.payload.recoverable), [true, true, false]);
});

void test('request: sent as hup_action_request, resolved by the matching response; unknown ids are ignored', async (t) => {
  const { node, hub, logs } = await hubRig(t);
  const { peer } = await node('pi-1');
  const waiting = hub.request('pi-1', { ...action('r-1', 2000), requires_confirmation: false });
  const request = await peer.next('hup_action_request');
  assert.deepEqual(request.payload, { action_id: 'r-1', name: 'set_led', params: { on: true }, timeout_ms: 2000, requires_confirmation: false });
  peer.send('hup_action_response', { action_id: 'nobody-asked', success: true });
  peer.send('hup_action_response', { action_id: 'r-1', success: false, error: 'led stuck', duration_ms: 3 });
  const response = await waiting;
  assert.deepEqual({ success: response.success, error: response.error }, { success: false, error: 'led stuck' });
  assert.equal(peer.errors().length, 0);
  assert.ok(logs.some((l) => l.includes('response to no waiting request') && l.includes('nobody-asked')));
});

void test('request: offline at once, timeout after timeout_ms plus the grace, disconnected when the socket closes', async (t) => {
  const { node, hub } = await hubRig(t);
  await assert.rejects(hub.request('pi-2', action('x')), (err: unknown) => err instanceof NodeUnreachable && err.reason === 'offline');
  const { peer } = await node('pi-1');
  const late = hub.request('pi-1', action('slow', 1));
  const gone = hub.request('pi-1', action('gone'));
  await assert.rejects(late, (err: unknown) => err instanceof NodeUnreachable && err.reason === 'timeout');
  peer.ws.close(1000);
  await assert.rejects(gone, (err: unknown) => err instanceof NodeUnreachable && err.reason === 'disconnected');
});

void test(`request: at most ${MAX_PENDING_PER_NODE} waiting per node, and an action_id in use is refused`, async (t) => {
  const { node, hub } = await hubRig(t);
  const { peer } = await node('pi-1');
  const waiting = Array.from({ length: MAX_PENDING_PER_NODE }, (_, i) => hub.request('pi-1', action(`p-${i}`)));
  await assert.rejects(hub.request('pi-1', action('one-more')), NodeBusy);
  for (let i = 0; i < MAX_PENDING_PER_NODE; i++) peer.send('hup_action_response', { action_id: `p-${i}`, success: true });
  assert.equal((await Promise.all(waiting)).length, MAX_PENDING_PER_NODE);
  const first = hub.request('pi-1', action('dup'));
  await assert.rejects(hub.request('pi-1', action('dup')), /already waiting/);
  peer.send('hup_action_response', { action_id: 'dup', success: true });
  await first;
});

void test('a listener that throws is logged at error and answered with 1099; the socket stays', async (t) => {
  const { node, listener, logs } = await hubRig(t);
  const { peer } = await node('pi-1');
  listener.fail = 'deviceEvent';
  peer.send('device_event', { event_type: 'heart_rate', data: { bpm: 70 } });
  const error = await peer.next('error');
  assert.equal(error.payload.code, 1099);
  listener.fail = null;
  await roundTrip(peer, listener, 'pi-1');
  assert.ok(logs.some((l) => levelOf(l) === 50 && l.includes('hardware listener failed')));
});

void test('a registration the listener fails on is 1099 and no ack; the node may try again', async (t) => {
  const { connect, listener, hub } = await hubRig(t);
  const peer = await connect();
  listener.fail = 'registered';
  peer.send('node_register', { node_id: 'pi-1', node_type: 'rpi', capabilities: [] });
  assert.equal((await peer.next('error')).payload.code, 1099);
  assert.equal(hub.online('pi-1'), false);
  listener.fail = null;
  assert.equal((await peer.register('pi-1')).payload.node_id, 'pi-1');
  assert.ok(hub.online('pi-1'));
});

void test('phone frames: peripheral_bridge_register reaches the listener; chat_request is answered with chat_response', async (t) => {
  const { node, listener } = await hubRig(t);
  const { peer } = await node('phone');
  peer.send('peripheral_bridge_register', { bridge_id: 'bridge-1', platform: 'ios', devices: [{ device_id: 'ring', kind: 'wearable' }] });
  const [nodeId, bridge] = await listener.next('bridgeRegistered');
  assert.equal(nodeId, 'phone');
  assert.equal(bridge.devices[0]?.device_id, 'ring');
  peer.send('chat_request', { session_id: 'ses_1', text: 'hello', reply_mode: 'final' });
  const [, request, reply] = await listener.next('chatRequest');
  assert.equal(request.text, 'hello');
  reply('hi there', true);
  const response = await peer.next('chat_response');
  assert.deepEqual(response.payload, { session_id: 'ses_1', text: 'hi there', final: true });
});

void test('disconnect: error then close by code; false for a node not connected', async (t) => {
  const { node, hub, listener } = await hubRig(t);
  const { peer } = await node('pi-1');
  assert.equal(hub.disconnect('pi-9', 1001, 'x'), false);
  assert.equal(hub.disconnect('pi-1', 4001, 'node key revoked'), true);
  assert.deepEqual(await peer.closed, { code: 4001, reason: 'node key revoked' });
  assert.equal(peer.errors(1001)[0]?.payload.message, 'node key revoked');
  assert.equal((await listener.next('disconnected'))[1], 'node key revoked');
  assert.deepEqual(disconnectCodes(1001), { errorCode: 1001, closeCode: 4001 });
  assert.deepEqual(disconnectCodes(1005), { errorCode: 1005, closeCode: 4003 });
  assert.deepEqual(disconnectCodes(4004), { errorCode: null, closeCode: 4004 });
  assert.deepEqual(disconnectCodes(1099), { errorCode: 1099, closeCode: 1008 });
});

void test('stop: node_bye and close 1001 to every node, waiting requests rejected as stopping, new sockets refused', async (t) => {
  const { node, hub, listener, connect } = await hubRig(t);
  const { peer } = await node('pi-1');
  const waiting = hub.request('pi-1', action('s-1'));
  await peer.next('hup_action_request');
  const stopped = hub.stop();
  await assert.rejects(waiting, (err: unknown) => err instanceof NodeUnreachable && err.reason === 'stopping');
  await stopped;
  assert.equal((await peer.closed).code, 1001);
  assert.equal(peer.frames.at(-1)?.type, 'node_bye');
  assert.deepEqual((await listener.next('disconnected')).slice(0, 2), ['pi-1', 'stopping']);
  assert.equal(hub.connected(), 0);
  await assert.rejects(hub.request('pi-1', action('s-2')), (err: unknown) => err instanceof NodeUnreachable && err.reason === 'stopping');
  const late = await connect();
  assert.equal((await late.closed).code, 1001);
});
