// daemon/hardware/devices/hardware-listener.ts: phone-bridged peripherals (phone_ble devices on the phone node,
// actions sent to the phone with params.device_id, a new register replacing the bridge's set, expiry
// making them offline and then removing them) and events the listener drops (unknown node, microphone
// while off).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConnectedDeviceList } from '../../../../protocol/hardware';
import { expiresAtMs, optInOfEvent } from '../../../../daemon/hardware/devices/hardware-listener';
import { hardwareRig, settingsWith } from '../hardware-rig';

void test('a phone bridge: peripherals become phone_ble devices whose actions go to the phone with params.device_id', async (t) => {
  const rig = await hardwareRig(t);
  rig.nodes.scripts.set('phone', (r) => ({ success: true, result: { bpm: 61, asked: r.params.device_id } }));
  rig.register('phone', { node_type: 'phone', capabilities: ['gps'] });
  rig.hw.listener.bridgeRegistered(
    'phone',
    { bridge_id: 'br-1', platform: 'ios', devices: [{ device_id: 'strap', kind: 'heart_rate_monitor', capabilities: ['heart_rate'] }, { device_id: 'bulb', kind: 'light', capabilities: ['led'] }] },
    rig.clock.ms,
  );
  const devices = ((await rig.inject('/api/devices/connected')).json() as ConnectedDeviceList).devices;
  assert.deepEqual(devices.map((d) => [d.device_id, d.transport, d.node_id, d.online]), [
    ['bulb', 'phone_ble', 'phone', true],
    ['phone', 'mesh', 'phone', true],
    ['strap', 'phone_ble', 'phone', true],
  ]);
  const out = await rig.call('hwdev_strap__read_heart_rate', {});
  assert.equal(out.data.status, 'success');
  assert.deepEqual(rig.nodes.requests[0]?.request.params, { device_id: 'strap' });
  assert.equal(rig.nodes.requests[0]?.request.device_id, 'strap');
  rig.hw.listener.deviceEvent('phone', { device_id: 'strap', event_type: 'heart_rate', data: { bpm: 64 } }, rig.clock.ms);
  assert.equal((rig.frames.at(-1)?.payload as { source?: string } | undefined)?.source, 'strap');

  rig.hw.listener.bridgeRegistered('phone', { bridge_id: 'br-1', platform: 'ios', devices: [{ device_id: 'strap', kind: 'heart_rate_monitor', capabilities: ['heart_rate'] }] }, rig.clock.ms);
  assert.equal(rig.tools.get('hwdev_bulb__set_led'), undefined, 'the new set replaces the old');
  assert.ok(rig.tools.get('hwdev_strap__read_heart_rate'));
  rig.register('phone', { node_type: 'phone', capabilities: ['gps'] });
  assert.ok(rig.tools.get('hwdev_strap__read_heart_rate'), 'the phone registering again keeps its bridged devices');
});

void test('bridge expiry: offline at expires_at, removed three heartbeat intervals later', async (t) => {
  const rig = await hardwareRig(t, settingsWith({ heartbeat_ms: 1000 }));
  rig.nodes.scripts.set('phone', () => ({ success: true, result: {} }));
  rig.hw.listener.registered({ nodeId: 'phone', register: { node_id: 'phone', node_type: 'phone', capabilities: [] }, heartbeatMs: 500, connectedAt: rig.clock.ms });
  rig.nodes.connected.add('phone');
  // The removal timer runs on real time: expires_at 20 ms ahead plus 3 × 500 ms. The expired-but-listed
  // checks below run on the test clock, long before it fires.
  const alive = setTimeout(() => undefined, 10_000); // the timer is unref'd (it must not hold a stopping brain)
  const removed = new Promise<void>((resolve) => rig.bus.on('wait', (e) => e.type === 'device_removed' && e.deviceId === 'tag' && resolve()));
  const expires = rig.clock.ms + 20;
  rig.hw.listener.bridgeRegistered('phone', { bridge_id: 'br', platform: 'android', expires_at: expires, devices: [{ device_id: 'tag', kind: 'tracker', capabilities: ['battery'] }] }, rig.clock.ms);
  assert.equal(rig.hw.devices.list().find((d) => d.id === 'tag')?.online, true);
  rig.clock.ms = expires;
  assert.equal(rig.hw.devices.list().find((d) => d.id === 'tag')?.online, false);
  assert.equal((await rig.call('hwdev_tag__read_battery', {})).data.error, 'device offline');
  await removed;
  clearTimeout(alive);
  assert.equal(rig.tools.get('hwdev_tag__read_battery'), undefined);
  rig.hw.listener.bridgeRegistered('phone', { bridge_id: 'br2', platform: 'android', expires_at: rig.clock.ms + 60_000, devices: [{ device_id: 'key', kind: 'tracker', capabilities: ['battery'] }] }, rig.clock.ms);
  await rig.sqlite.write(() => undefined);
  rig.clock.ms += 60_000;
  await rig.restart();
  assert.equal(rig.tools.get('hwdev_key__read_battery'), undefined, 'a bridge that expired while the brain was down is removed at start');
  assert.equal(expiresAtMs(1_800_000_000), 1_800_000_000_000);
  assert.equal(expiresAtMs(1_800_000_000_000), 1_800_000_000_000);
});

void test('events of an unregistered node and microphone events while off are dropped', async (t) => {
  const rig = await hardwareRig(t);
  rig.hw.listener.deviceEvent('ghost', { event_type: 'temperature', data: { celsius: 1 } }, rig.clock.ms);
  rig.register('pi-1', { capabilities: ['microphone', 'temperature'] });
  rig.hw.listener.deviceEvent('pi-1', { event_type: 'audio_frame', data: { level: 3 } }, rig.clock.ms);
  rig.hw.listener.deviceEvent('pi-1', { event_type: 'microphone_level', data: { level: 3 } }, rig.clock.ms);
  assert.equal(rig.frames.length, 0);
  assert.deepEqual(['camera_frame', 'video_frame', 'audio_frame', 'microphone', 'temperature'].map(optInOfEvent), ['camera', 'camera', 'microphone', 'microphone', null]);
});
