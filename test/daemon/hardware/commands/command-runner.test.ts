// daemon/hardware/commands/command-runner.ts through generated tools (hardware-rig.ts: real SQLite, scripted
// nodes): the verify loop (matches, re-issues counted in attempts, gives up verified false; expect
// lists, tolerance, transient, no contract), offline answered at once, timeouts and node failures,
// the per-device actuator rate limit, and the opt-in tier refusing before anything is sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CommandRecord } from '../../../../protocol/hardware';
import { NodeUnreachable } from '../../../../daemon/hardware/links/node-links';
import { matches, readPath } from '../../../../daemon/hardware/commands/command-runner';
import { hardwareRig, lampManifest, lampScript, settingsWith } from '../hardware-rig';

const command = async (rig: Awaited<ReturnType<typeof hardwareRig>>, id: string): Promise<CommandRecord> => (await rig.inject(`/api/commands/${id}`)).json() as CommandRecord;
const statuses = (c: CommandRecord): string[] => c.history.map((h) => h.status);

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
  assert.match(record.history[2]!.detail ?? '', /re-issued: state\.on = false, expected true/);

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

void test('readPath and matches: dotted paths into objects and arrays; lists, $param, tolerance, presence', () => {
  assert.equal(readPath({ a: { b: [1, { c: 2 }] } }, 'a.b.1.c'), 2);
  assert.equal(readPath({ a: 1 }, 'a.b'), undefined);
  assert.equal(readPath(null, 'a'), undefined);
  assert.ok(matches(true, '$on', { on: true }, undefined));
  assert.ok(!matches(false, '$on', { on: true }, undefined));
  // A register read back as 1/0 is the state a boolean set: true = 1, false = 0, and nothing else.
  assert.ok(matches(1, '$on', { on: true }, undefined));
  assert.ok(matches(0, '$on', { on: false }, undefined));
  assert.ok(!matches(2, '$on', { on: true }, undefined));
  assert.ok(!matches(0, '$on', { on: true }, undefined));
  assert.ok(matches(true, 1, {}, undefined));
  assert.ok(!matches('1', true, {}, undefined), 'strings are not coerced');
  assert.ok(matches('b', ['a', 'b'], {}, undefined));
  assert.ok(matches(20.4, 20, {}, 0.5));
  assert.ok(!matches(20.6, 20, {}, 0.5));
  assert.ok(!matches(20.1, 20, {}, undefined), 'no tolerance: exact');
  assert.ok(matches(0, undefined, {}, undefined));
  assert.ok(!matches(null, undefined, {}, undefined));
  assert.ok(!matches('1', 1, {}, 5), 'no coercion between types');
});
