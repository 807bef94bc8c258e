// daemon/hardware/hardware.ts through its listener, tools, directory and routes, on a real SQLite file
// with scripted nodes behind the NodeLinks seam (hardware-rig.ts): registration → devices and tools;
// a tool call → a command with its history; the verify loop (matches, re-issues, gives up); offline,
// timeout, rate limit and opt-in refusals; removal; device id conflicts; restarts (devices listed
// offline with their last readings; a crash's commands failed "brain restarted").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CommandRecord, ConnectedDeviceList, NodeHealthList } from '../../../protocol/hardware';
import { NodeUnreachable } from '../../../daemon/hardware/node-links';
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
  assert.equal(lamp.transport, 'serial');
  assert.equal(lamp.node_id, 'pi-1');
  assert.equal(lamp.online, true);
  assert.deepEqual(lamp.actions.map((a) => a.tool), ['hwdev_lamp__set_power', 'hwdev_lamp__read_power']);
  assert.ok(rig.events.some((e) => e.type === 'device_registered' && e.deviceId === 'lamp'));
});

void test('verify: a state that did not stick is re-issued (attempts counts issues); one that never sticks is verified false', async (t) => {
  const rig = await hardwareRig(t);
  const state = { on: false, drop: 1 };
  rig.nodes.scripts.set('pi-1', lampScript(state));
  rig.register('pi-1', { device_manifest: lampManifest() });
  const once = await rig.call('hwdev_lamp__set_power', { on: true });
  assert.equal(once.data.data.verified, true);
  let record = await command(rig, once.data.data.command_id as string);
  assert.equal(record.attempts, 2);
  assert.deepEqual(statuses(record), ['queued', 'sent', 'sent', 'succeeded']);
  assert.match(record.history[2]!.detail ?? '', /re-issued: state\.on = false, expected "\$on"/);

  state.drop = 10;
  const never = await rig.call('hwdev_lamp__set_power', { on: false });
  assert.equal(never.data.success, true, 'the node did what it was told');
  assert.equal(never.data.data.verified, false);
  record = await command(rig, never.data.data.command_id as string);
  assert.equal(record.attempts, 3, 'retries: 2 → three issues');
  assert.equal(record.verified, false);
});

void test('verify: expect lists, numeric tolerance, transient contracts and no contract', async (t) => {
  const rig = await hardwareRig(t);
  let temp = 20.4;
  rig.nodes.scripts.set('pi-1', (r) =>
    r.name === 'read_temp' ? { success: true, result: { celsius: temp } } : r.name === 'beep' ? { success: true, result: {} } : { success: true, result: { mode: 'eco' } },
  );
  rig.register('pi-1', {
    device_manifest: {
      device_id: 'thermo',
      device_type: 'thermostat',
      name: 'Thermostat',
      actions: [
        { name: 'set_target', params: [{ name: 'celsius', type: 'number', required: true }], verify: { via: 'read_temp', field: 'celsius', expect: '$celsius', tolerance: 0.5 } },
        { name: 'set_mode', params: [{ name: 'mode', type: 'string' }], verify: { via: 'read_mode', field: 'mode', expect: ['eco', 'comfort'] } },
        { name: 'beep', verify: { via: 'read_temp', field: 'x', transient: true } },
        { name: 'plain' },
        { name: 'read_temp', category: 'sensor' },
        { name: 'read_mode', category: 'sensor' },
      ],
    },
  });
  assert.equal((await rig.call('hwdev_thermo__set_target', { celsius: 20 })).data.data.verified, true);
  temp = 25;
  assert.equal((await rig.call('hwdev_thermo__set_target', { celsius: 20 })).data.data.verified, false);
  assert.equal((await rig.call('hwdev_thermo__set_mode', { mode: 'x' })).data.data.verified, true);
  assert.equal((await rig.call('hwdev_thermo__beep', {})).data.data.verified, true);
  assert.equal((await rig.call('hwdev_thermo__plain', {})).data.data.verified, null);
});

void test('offline: the tool answers at once with device offline and the command fails; a timeout is a timeout', async (t) => {
  const rig = await hardwareRig(t);
  rig.nodes.scripts.set('pi-1', lampScript());
  rig.register('pi-1', { device_manifest: lampManifest() });
  rig.nodes.connected.delete('pi-1');
  rig.hw.listener.disconnected('pi-1', 'closed', rig.clock.ms, false);
  assert.ok(rig.events.some((e) => e.type === 'node_offline' && e.nodeId === 'pi-1'));
  const out = await rig.call('hwdev_lamp__set_power', { on: true });
  assert.deepEqual({ success: out.data.success, status: out.data.status, error: out.data.error }, { success: false, status: 'failure', error: 'device offline' });
  assert.equal(rig.nodes.requests.length, 0, 'nothing was sent');
  const record = await command(rig, out.data.data.command_id as string);
  assert.deepEqual(statuses(record), ['queued', 'failed']);

  rig.register('pi-1', { device_manifest: lampManifest() });
  rig.nodes.scripts.set('pi-1', () => Promise.reject(new NodeUnreachable('pi-1', 'timeout')));
  const late = await rig.call('hwdev_lamp__set_power', { on: true });
  assert.equal(late.data.status, 'timeout');
  assert.deepEqual(statuses(await command(rig, late.data.data.command_id as string)), ['queued', 'sent', 'timeout']);
  rig.nodes.scripts.set('pi-1', () => ({ success: false, error: 'relay stuck' }));
  const failed = await rig.call('hwdev_lamp__set_power', { on: true });
  assert.deepEqual([failed.data.status, failed.data.error], ['failure', 'relay stuck']);
});

void test('actuators are rate-limited per device (settings, or the action\'s own limit); reads are not', async (t) => {
  const rig = await hardwareRig(t, settingsWith({ actuator_rate_per_minute: 2 }));
  rig.nodes.scripts.set('pi-1', lampScript());
  rig.register('pi-1', { device_manifest: lampManifest({}, null) });
  assert.equal((await rig.call('hwdev_lamp__set_power', { on: true })).data.status, 'success');
  assert.equal((await rig.call('hwdev_lamp__set_power', { on: false })).data.status, 'success');
  const third = await rig.call('hwdev_lamp__set_power', { on: true });
  assert.deepEqual([third.data.status, third.data.error], ['denied', 'rate limited']);
  assert.deepEqual(statuses(await command(rig, third.data.data.command_id as string)), ['queued', 'denied']);
  for (let i = 0; i < 5; i++) assert.equal((await rig.call('hwdev_lamp__read_power', {})).data.status, 'success');
  rig.clock.ms += 60_001;
  assert.equal((await rig.call('hwdev_lamp__set_power', { on: true })).data.status, 'success');

  rig.register('pi-2', { device_manifest: { device_id: 'fan', device_type: 'fan', name: 'Fan', actions: [{ name: 'spin', rate_limit_per_minute: 1 }] } });
  rig.nodes.scripts.set('pi-2', () => ({ success: true, result: {} }));
  assert.equal((await rig.call('hwdev_fan__spin', {})).data.status, 'success');
  assert.equal((await rig.call('hwdev_fan__spin', {})).data.status, 'denied');
});

void test('opt-in camera while off: its action is denied, listed in denied, never sent; its events are dropped', async (t) => {
  const rig = await hardwareRig(t);
  rig.nodes.scripts.set('cam-1', () => ({ success: true, result: {} }));
  const decision = rig.register('cam-1', { capabilities: ['camera', 'temperature'] });
  assert.ok(decision.denied.includes('camera') && decision.denied.includes('capture_image'));
  assert.ok(!decision.actionNames.includes('capture_image'));
  assert.equal(rig.tools.get('hwdev_cam_1__capture_image')?.safety, 'privileged');
  const out = await rig.call('hwdev_cam_1__capture_image', {});
  assert.equal(out.data.status, 'denied');
  assert.match(out.data.error ?? '', /camera tier is off/);
  assert.equal(rig.nodes.requests.length, 0);
  rig.hw.listener.deviceEvent('cam-1', { event_type: 'camera_frame', data: { bytes: 10 } }, rig.clock.ms);
  rig.hw.listener.deviceEvent('cam-1', { event_type: 'temperature', data: { celsius: 19 } }, rig.clock.ms);
  assert.deepEqual(rig.frames.map((f) => f.payload), [{ source: 'cam_1', readings: { celsius: 19 }, at: rig.clock.ms / 1000 }]);

  const on = await hardwareRig(t, settingsWith({ opt_in: { camera: true, microphone: false } }));
  on.nodes.scripts.set('cam-1', () => ({ success: true, result: { image: 'x' } }));
  assert.ok(!on.register('cam-1', { capabilities: ['camera'] }).denied.includes('camera'));
  assert.equal((await on.call('hwdev_cam_1__capture_image', {})).data.status, 'success');
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

void test('node health: heartbeat age, fresh under 1.5 intervals, stale under 3, offline at 3 or disconnected; version', async (t) => {
  const rig = await hardwareRig(t);
  rig.register('pi-1', { device_manifest: lampManifest(), firmware_version: 'fw-9', uptime_s: 5 });
  const health = async () => ((await rig.inject('/api/nodes/health')).json() as NodeHealthList).nodes[0]!;
  let n = await health();
  assert.deepEqual([n.freshness, n.heartbeat_age_s, n.version, n.uptime_s, n.devices, n.heartbeat_ms], ['fresh', 0, 'fw-9', 5, 1, 10_000]);
  assert.equal(n.connected_at, new Date(rig.clock.ms).toISOString());
  rig.clock.ms += 14_999;
  assert.equal((await health()).freshness, 'fresh');
  rig.clock.ms += 1;
  assert.equal((await health()).freshness, 'stale');
  rig.hw.listener.heartbeat('pi-1', {}, rig.clock.ms);
  assert.equal((await health()).freshness, 'fresh');
  rig.clock.ms += 30_000;
  n = await health();
  assert.deepEqual([n.freshness, n.heartbeat_age_s, n.online], ['offline', 30, true]);
  rig.hw.listener.disconnected('pi-1', 'stale', rig.clock.ms, false);
  assert.equal((await health()).online, false);
});

void test('a node that registers again without a device removes it and its tools; superseded sockets change nothing', async (t) => {
  const rig = await hardwareRig(t);
  const second = { ...lampManifest(), device_id: 'lamp2', name: 'Lamp 2' };
  rig.register('pi-1', { device_manifest: [lampManifest(), second] });
  assert.ok(rig.tools.get('hwdev_lamp2__set_power'));
  rig.register('pi-1', { device_manifest: [lampManifest()] });
  assert.equal(rig.tools.get('hwdev_lamp2__set_power'), undefined);
  assert.ok(rig.tools.get('hwdev_lamp__set_power'), 'the kept device keeps its tools');
  assert.ok(rig.events.some((e) => e.type === 'device_removed' && e.deviceId === 'lamp2'));
  rig.hw.listener.disconnected('pi-1', 'superseded', rig.clock.ms, true);
  assert.equal(rig.hw.devices.list()[0]!.online, true);
  await rig.restart();
  assert.deepEqual(rig.hw.devices.list().map((d) => d.id), ['lamp'], 'the removal is stored');
});

void test('device ids are global: a second online node is refused the id; once the holder is offline the device moves', async (t) => {
  const rig = await hardwareRig(t);
  rig.register('pi-1', { device_manifest: lampManifest() });
  const refused = rig.register('pi-2', { device_manifest: lampManifest({ name: 'Imposter' }) });
  assert.deepEqual(refused.denied, ['device:lamp']);
  assert.equal(rig.hw.devices.list()[0]!.name, 'Desk lamp');
  rig.nodes.connected.delete('pi-1');
  rig.hw.listener.disconnected('pi-1', 'closed', rig.clock.ms, false);
  const moved = rig.register('pi-2', { device_manifest: lampManifest({ name: 'Moved lamp' }) });
  assert.deepEqual(moved.denied, []);
  const lamp = ((await rig.inject('/api/devices/connected')).json() as ConnectedDeviceList).devices[0]!;
  assert.deepEqual([lamp.node_id, lamp.name, lamp.online], ['pi-2', 'Moved lamp', true]);
});

void test('a brain that crashed leaves sent commands behind: at start they are failed "brain restarted"', async (t) => {
  const rig = await hardwareRig(t);
  rig.register('pi-1', { device_manifest: lampManifest() });
  rig.nodes.scripts.set('pi-1', () => new Promise(() => undefined));
  void rig.call('hwdev_lamp__set_power', { on: true });
  await new Promise((r) => setTimeout(r, 50));
  const [stuck] = ((await rig.inject('/api/commands/recent')).json() as { commands: CommandRecord[] }).commands;
  assert.equal(stuck?.status, 'sent');
  await rig.restart({ crash: true });
  const after = await command(rig, stuck.command_id);
  assert.deepEqual(statuses(after), ['queued', 'sent', 'failed']);
  assert.equal(after.error, 'brain restarted');
});

void test('set_device through the directory: picks the action by its params, runs it as a command; unknown device NOT_FOUND; confirmation refused', async (t) => {
  const rig = await hardwareRig(t);
  rig.nodes.scripts.set('pi-1', lampScript());
  rig.register('pi-1', {
    device_manifest: [
      lampManifest(),
      {
        device_id: 'heater',
        device_type: 'relay',
        name: 'Heater',
        capabilities: ['relay'],
        actions: [
          { name: 'switch', params: [{ name: 'on', type: 'boolean', required: true }] },
          { name: 'set_level', params: [{ name: 'level', type: 'integer', required: true }] },
        ],
      },
    ],
  });
  const after = await rig.hw.devices.set('lamp', { power: 'on' });
  assert.equal(after.id, 'lamp');
  assert.deepEqual(rig.nodes.requests[0]?.request.params, { on: true });
  const [last] = ((await rig.inject('/api/commands/recent?device=lamp&limit=1')).json() as { commands: CommandRecord[] }).commands;
  assert.deepEqual([last?.action, last?.status, last?.tool, last?.verified], ['set_power', 'succeeded', null, true]);
  await assert.rejects(rig.hw.devices.set('nope', { power: 'on' }), (err: unknown) => (err as { code?: string }).code === 'NOT_FOUND');
  await assert.rejects(rig.hw.devices.set('lamp', { colour: 'red' }), /has no action that takes colour/);
  await assert.rejects(rig.hw.devices.set('heater', { power: 'off' }), (err: unknown) => (err as Error).name === 'ToolDenied' && /hwdev_heater__switch/.test((err as Error).message));
  const [denied] = ((await rig.inject('/api/commands/recent?device=heater')).json() as { commands: CommandRecord[] }).commands;
  assert.equal(denied?.status, 'denied');
  assert.equal(rig.nodes.requests.filter((r) => r.request.device_id === 'heater').length, 0);
});
