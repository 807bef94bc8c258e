// daemon/hardware/devices/device-views.ts through GET /api/nodes/health (hardware-rig.ts): heartbeat age,
// freshness by the node's heartbeat interval, version and uptime from the register, disconnection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeHealthList } from '../../../../protocol/hardware';
import { hardwareRig, lampManifest } from '../hardware-rig';

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
  rig.clock.ms += 20_000;
  rig.hw.listener.deviceEvent('pi-1', { event_type: 'status', data: { on: true } }, rig.clock.ms);
  assert.equal((await health()).freshness, 'fresh', 'an event is a sign of life too');
  rig.clock.ms += 30_000;
  n = await health();
  assert.deepEqual([n.freshness, n.heartbeat_age_s, n.online], ['offline', 30, true]);
  rig.hw.listener.disconnected('pi-1', 'stale', rig.clock.ms, false);
  assert.equal((await health()).online, false);
});
