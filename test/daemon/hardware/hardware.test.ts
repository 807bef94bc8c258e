// daemon/hardware/hardware.ts through its listener, tools, directory and routes, on a real SQLite file
// with scripted nodes behind the NodeLinks seam (hardware-rig.ts): registration → devices and tools, a
// tool call → a command with its history; telemetry relayed, announced and listed, and after a
// restart the device listed offline with its last readings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CommandRecord } from '../../../protocol/hardware';
import type { ConnectedDeviceList, NodeHealthList } from '../../../protocol/hardware';
import { hardwareRig, lampManifest, lampScript, settingsWith } from './hardware-rig';

const command = async (rig: Awaited<ReturnType<typeof hardwareRig>>, id: string): Promise<CommandRecord> => (await rig.inject(`/api/commands/${id}`)).json() as CommandRecord;
const statuses = (c: CommandRecord): string[] => c.history.map((h) => h.status);

void test('a node\'s manifest becomes a device with tools; a call runs, is verified and recorded with its history', async (t) => {
  const rig = await hardwareRig(t);
  rig.nodes.scripts.set('pi-1', lampScript());
  const decision = rig.register('pi-1', { capabilities: ['led', 'camera'], device_manifest: lampManifest(), agent_version: '1.2.3' });
  assert.deepEqual(decision.granted, ['led']);
  assert.deepEqual(decision.denied, ['camera']);
  assert.deepEqual([...decision.actionNames].sort(), ['read_power', 'set_power']);
  assert.equal(rig.tools.get('hwdev_lamp__set_power')?.safety, 'active');
  assert.equal(rig.tools.get('hwdev_lamp__read_power')?.safety, 'passive');
  assert.equal(rig.tools.ownerOf('hwdev_lamp__set_power'), 'hardware');

  const out = await rig.call('hwdev_lamp__set_power', { on: true });
  assert.equal(out.data.success, true);
  assert.equal(out.data.status, 'success');
  assert.equal(out.data.error, null);
  assert.equal(out.data.data.verified, true);
  assert.equal(out.data.data.accepted, true);
  assert.match(out.summary, /Desk lamp set_power: done \(verified\)/);
  const sent = rig.nodes.requests.map((r) => [r.request.name, r.request.device_id, r.request.params]);
  assert.deepEqual(sent, [
    ['set_power', 'lamp', { on: true }],
    ['read_power', 'lamp', {}],
  ]);
  const record = await command(rig, out.data.data.command_id as string);
  assert.deepEqual(statuses(record), ['queued', 'sent', 'succeeded']);
  assert.equal(record.attempts, 1);
  assert.equal(record.verified, true);
  assert.equal(record.tool, 'hwdev_lamp__set_power');
  assert.equal(record.turn_id, 'turn-1');

  const devices = (await rig.inject('/api/devices/connected')).json() as ConnectedDeviceList;
  assert.equal(devices.devices.length, 1);
  const lamp = devices.devices[0]!;
  assert.equal(lamp.transport, 'mesh');
  assert.equal(lamp.bus, 'serial');
  assert.equal(lamp.node_id, 'pi-1');
  assert.equal(lamp.online, true);
  assert.deepEqual(lamp.actions.map((a) => a.tool), ['hwdev_lamp__set_power', 'hwdev_lamp__read_power']);
  assert.ok(rig.events.some((e) => e.type === 'device_registered' && e.deviceId === 'lamp'));
});

void test('telemetry: readings relayed, announced and listed; after a restart the device is offline with its last readings', async (t) => {
  const rig = await hardwareRig(t);
  rig.register('pi-1', { device_manifest: lampManifest() });
  rig.hw.listener.heartbeat('pi-1', { battery_pct: 80, rssi: -60, uptime_s: 12 }, rig.clock.ms);
  rig.hw.listener.deviceEvent('pi-1', { event_type: 'status', data: { on: true, power: { watts: 7.5 }, tags: ['a'] } }, rig.clock.ms);
  rig.hw.listener.deviceEvent('pi-1', { event_type: 'strange_new_type', device_id: 'lamp', data: { hum: 'mm' } }, rig.clock.ms + 1);
  rig.hw.listener.deviceEvent('pi-1', { event_type: 'status', device_id: 'not_mine', data: { x: 1 } }, rig.clock.ms);
  assert.deepEqual(rig.frames[0], { type: 'telemetry', session_id: '', payload: { source: 'lamp', readings: { on: true, 'power.watts': 7.5 }, at: rig.clock.ms / 1000 } });
  assert.equal(rig.frames.length, 2, 'the unknown device\'s event is dropped');
  const bus = rig.events.filter((e) => e.type === 'device_telemetry');
  assert.deepEqual(bus.map((e) => e.type === 'device_telemetry' && e.eventType), ['status', 'strange_new_type']);
  let lamp = ((await rig.inject('/api/devices/connected')).json() as ConnectedDeviceList).devices[0]!;
  assert.deepEqual(Object.keys(lamp.readings).sort(), ['hum', 'on', 'power.watts']);
  assert.deepEqual([lamp.battery_pct, lamp.rssi], [80, -60]);
  assert.deepEqual(rig.hw.devices.list(), [{ id: 'lamp', name: 'Desk lamp', kind: 'light', online: true, state: { on: true, 'power.watts': 7.5, hum: 'mm' } }]);

  await rig.restart();
  lamp = ((await rig.inject('/api/devices/connected')).json() as ConnectedDeviceList).devices[0]!;
  assert.equal(lamp.online, false);
  assert.equal(lamp.readings['power.watts']?.value, 7.5);
  assert.equal(lamp.last_seen, new Date(rig.clock.ms + 1).toISOString());
  const out = await rig.call('hwdev_lamp__set_power', { on: true });
  assert.equal(out.data.error, 'device offline', 'a stored device\'s tool answers at once');
  const nodes = ((await rig.inject('/api/nodes/health')).json() as NodeHealthList).nodes;
  assert.deepEqual(nodes.map((n) => [n.node_id, n.online, n.freshness, n.battery_pct, n.devices]), [['pi-1', false, 'offline', 80, 1]]);
});

void test('stream_to_sessions off: nothing is broadcast, readings are still kept', async (t) => {
  const rig = await hardwareRig(t, settingsWith({ telemetry: { history_points: 20, history_window_s: 600, stream_to_sessions: false } }));
  rig.register('pi-1', { device_manifest: lampManifest() });
  rig.hw.listener.deviceEvent('pi-1', { event_type: 'status', data: { on: true } }, rig.clock.ms);
  assert.equal(rig.frames.length, 0);
  assert.equal(rig.hw.devices.list()[0]!.state.on, true);
});

void test('runAction (for hand-written skills) runs a command like the tools do; connected and history read the same state', async (t) => {
  const rig = await hardwareRig(t);
  rig.nodes.scripts.set('pi-1', lampScript());
  rig.register('pi-1', { device_manifest: lampManifest() });
  const result = await rig.hw.runAction('lamp', 'set_power', { on: true }, { tool: 'switch_light', turnId: 'turn-5' });
  assert.deepEqual([result.success, result.data.verified], [true, true]);
  const record = await command(rig, result.data.command_id as string);
  assert.deepEqual([record.tool, record.turn_id, statuses(record)], ['switch_light', 'turn-5', ['queued', 'sent', 'succeeded']]);
  assert.equal((await rig.hw.runAction('lamp', 'explode', {}, { tool: null, turnId: null })).status, 'failure');
  for (let i = 0; i < 3; i++) rig.hw.listener.deviceEvent('pi-1', { event_type: 'power', data: { watts: i } }, rig.clock.ms + i);
  assert.deepEqual(rig.hw.history('lamp', 'watts').map((p) => p.v), [0, 1, 2]);
  assert.equal(rig.hw.connected()[0]?.readings.watts?.value, 2);
});
