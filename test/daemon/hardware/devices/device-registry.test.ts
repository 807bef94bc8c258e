// daemon/hardware/devices/device-registry.ts (hardware-rig.ts: real SQLite, real ToolRegistry): a node that
// registers again without a device removes it with its tools (and the removal is stored); device ids
// are global (a second online node is refused, an offline holder's device moves); tool names that
// collide leave the second action without a tool; generic tools off registers none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConnectedDeviceList } from '../../../../protocol/hardware';
import { hardwareRig, lampManifest, settingsWith } from '../hardware-rig';

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

void test('two device ids that differ only in case: the second action has no tool of its own', async (t) => {
  const rig = await hardwareRig(t);
  rig.register('pi-1', { device_manifest: [lampManifest(), { ...lampManifest(), device_id: 'LAMP' }] });
  const devices = ((await rig.inject('/api/devices/connected')).json() as ConnectedDeviceList).devices;
  const tools = devices.flatMap((d) => d.actions.map((a) => a.tool));
  assert.equal(tools.filter((n) => n === 'hwdev_lamp__set_power').length, 1);
  assert.equal(tools.filter((n) => n === null).length, 2);
});

void test('generic_tools off: devices are listed, no hwdev_ tool is registered', async (t) => {
  const rig = await hardwareRig(t, settingsWith({ generic_tools: false }));
  rig.register('pi-1', { device_manifest: lampManifest() });
  assert.equal(rig.tools.names().filter((n) => n.startsWith('hwdev_')).length, 0);
  assert.equal(rig.hw.devices.list().length, 1);
});
