// daemon/hardware/skills/climate-skill.ts on the device layer (skill-rig.ts): device_climate reads
// the last temperature and humidity of one or all climate devices with their ages and a trend from the
// telemetry history; °F readings are converted; a device with no reading says so; none at all is a
// ToolFailure. Passive: nothing is sent to a node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ago, trendOf, type ClimateEntry } from '../../../../daemon/hardware/skills/climate-skill';
import { lampManifest } from '../hardware-rig';
import { sensorManifest, skillRig, thermostatManifest } from './skill-rig';

const MIN = 60_000;

void test('device_climate: every climate device with readings, ages and the last hour\'s trend; nothing sent to a node', async (t) => {
  const s = await skillRig(t);
  assert.equal(s.rig.tools.get('device_climate')?.safety, 'passive');
  await assert.rejects(s.call('device_climate', {}), { name: 'ToolFailure', message: /there is no temperature or humidity sensor here/ });
  s.rig.register('pi-1', { device_manifest: [sensorManifest('living', 'Living room'), thermostatManifest(), lampManifest()] });
  const start = s.rig.clock.ms;
  const celsius = [19.8, 20, 20.2, 20.4, 20.6, 20.8, 21];
  // 2 h ago … now in 20 min steps: the trend counts only the last hour (20.4 → 21).
  celsius.forEach((c, i) => s.rig.hw.listener.deviceEvent('pi-1', { event_type: 'climate', device_id: 'living', data: { env: { celsius: c }, humidity: 45 } }, start + (i - 6) * 20 * MIN));
  const out = await s.call('device_climate', {});
  const devices = out.data.devices as ClimateEntry[];
  assert.deepEqual(devices.map((d) => d.device_id), ['hall_thermostat', 'living'], 'the lamp is no climate device');
  const living = devices[1]!;
  assert.deepEqual([living.celsius?.reading, living.celsius?.value, living.celsius?.age_s], ['env.celsius', 21, 0]);
  assert.deepEqual(living.celsius?.trend, { change: 0.6, over_s: 3600, direction: 'rising' });
  assert.deepEqual(living.humidity?.trend, { change: 0, over_s: 3600, direction: 'steady' });
  assert.equal(devices[0]!.celsius, null);
  assert.equal(out.summary, 'Hall thermostat: no temperature or humidity reading yet; Living room: 21 °C (just now, rising 0.6 °C over 60 min), humidity 45 % (just now, steady over 60 min)');

  s.rig.clock.ms = start + 3 * MIN;
  const later = ((await s.call('device_climate', { device: 'living' })).data.devices as ClimateEntry[])[0]!;
  assert.equal(later.celsius?.age_s, 180);
  assert.deepEqual(later.celsius?.trend, { change: 0.4, over_s: 2400, direction: 'rising' }, 'the window moved with the clock');
  assert.equal(s.rig.nodes.requests.length, 0);
});

void test('device_climate: one device by name; °F converted; an offline device gives its last known values', async (t) => {
  const s = await skillRig(t);
  s.rig.register('pi-1', { device_manifest: [sensorManifest('porch', 'Porch sensor'), sensorManifest('attic', 'Attic sensor')] });
  s.rig.hw.listener.deviceEvent('pi-1', { event_type: 'climate', device_id: 'porch', data: { temp_f: 68, rh: 70 } }, s.rig.clock.ms);
  s.rig.nodes.disconnect('pi-1');
  s.rig.hw.listener.disconnected('pi-1', 'closed', s.rig.clock.ms, false);
  const out = await s.call('device_climate', { device: 'PORCH' });
  const [porch] = out.data.devices as ClimateEntry[];
  assert.deepEqual([porch!.celsius?.value, porch!.celsius?.reading, porch!.humidity?.value, porch!.online], [20, 'temp_f', 70, false]);
  assert.equal(out.summary, 'Porch sensor: 20 °C (just now), humidity 70 % (just now) (offline: last known values)');
  await assert.rejects(s.call('device_climate', { device: 'sensor' }), { message: /"sensor" could be any of: Attic sensor \(attic\), Porch sensor \(porch\)/ });
});

void test('trend and age helpers: fewer than two points in the window is no trend; falling and steady by threshold; ages in words', () => {
  const now = 10 * 3_600_000;
  assert.equal(trendOf([{ t: now - 2 * 3_600_000, v: 10, n: 1 }, { t: now, v: 12, n: 1 }], now, 0.2), null);
  assert.deepEqual(trendOf([{ t: now - 600_000, v: 22, n: 1 }, { t: now, v: 21.5, n: 1 }], now, 0.2), { change: -0.5, over_s: 600, direction: 'falling' });
  assert.equal(trendOf([{ t: now - 600_000, v: 22, n: 1 }, { t: now, v: 22.1, n: 1 }], now, 0.2)?.direction, 'steady');
  assert.deepEqual([ago(3), ago(45), ago(600), ago(7200), ago(3 * 86_400)], ['just now', '45 s ago', '10 min ago', '2 h ago', '3 d ago']);
});
