// daemon/hardware/devices/device-manifest.ts: registers without a manifest derive actions from capabilities
// (the documented table), one manifest or a list is kept with aliases resolved, and peripherals become
// phone_ble devices.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveActions, deviceIdOfNode, manifestOfPeripheral, manifestsOf, specOf } from '../../../../daemon/hardware/devices/device-manifest';
import type { DeviceManifest, NodeRegister } from '../../../../protocol/node';

const register = (extra: Partial<NodeRegister> = {}): NodeRegister => ({ node_id: 'pi-1.kitchen', node_type: 'rpi', capabilities: ['relay', 'temperature', 'gpio', 'camera'], ...extra });

void test('a register without a manifest is one device named after the node, actions from the capability table', () => {
  const [m, ...rest] = manifestsOf(register({ name: 'Kitchen Pi' }));
  assert.equal(rest.length, 0);
  assert.equal(m!.device_id, 'pi_1_kitchen');
  assert.equal(m!.name, 'Kitchen Pi');
  assert.deepEqual(m!.actions.map((a) => a.name), ['set_relay', 'read_temperature', 'capture_image'], 'gpio derives nothing');
  assert.equal(deviceIdOfNode('a:b-c.d'), 'a_b_c_d');
  assert.deepEqual(deriveActions(['buzzer', 'led', 'buzzer']).map((a) => [a.name, a.params?.map((p) => p.name)]), [
    ['buzz', ['duration_ms']],
    ['set_led', ['on']],
  ]);
  assert.equal(specOf(m!, 'mesh').transport, 'mesh');
});

void test('one manifest or a list is kept; aliases resolved, repeated actions and params kept once; transport from the manifest', () => {
  const lamp: DeviceManifest = {
    device_id: 'lamp',
    device_type: 'light',
    name: 'Lamp',
    transport: { kind: 'serial' },
    actions: [{ id: 'set_power', parameters: [{ name: 'on', type: 'boolean' }, { name: 'on', type: 'string' }] }, { name: 'set_power' }, { description: 'no name' }],
  };
  assert.deepEqual(manifestsOf(register({ device_manifest: lamp })), [lamp]);
  assert.equal(manifestsOf(register({ device_manifest: [lamp, { ...lamp, device_id: 'lamp2' }] })).length, 2);
  const spec = specOf(lamp, 'mesh');
  assert.equal(spec.transport, 'mesh', 'how the brain reaches it');
  assert.equal(spec.bus, 'serial', 'the device\'s own link to its node');
  assert.equal(specOf(lamp, 'local').transport, 'local');
  assert.equal(specOf({ ...lamp, transport: { kind: 'phone_ble' } }, 'mesh').transport, 'phone_ble');
  assert.deepEqual(spec.actions.map((a) => a.name), ['set_power']);
  assert.deepEqual(spec.actions[0]!.params.map((p) => p.type), ['boolean']);
});

void test('a bridged peripheral is a phone_ble device: its manifest, or derived from its capabilities', () => {
  const derived = manifestOfPeripheral({ device_id: 'hr_strap', kind: 'heart_rate_monitor', capabilities: ['heart_rate', 'battery'] });
  assert.equal(derived.transport?.kind, 'phone_ble');
  assert.equal(derived.device_type, 'heart_rate_monitor');
  assert.deepEqual(derived.actions.map((a) => a.name), ['read_heart_rate', 'read_battery']);
  const own = manifestOfPeripheral({ device_id: 'bulb', kind: 'light', manifest: { device_id: 'other', device_type: 'bulb', name: 'Bulb', transport: { kind: 'ble' }, actions: [{ name: 'toggle' }] } });
  assert.equal(own.device_id, 'bulb', 'the peripheral id wins');
  assert.equal(own.transport?.kind, 'phone_ble');
  assert.deepEqual(own.actions.map((a) => a.name), ['toggle']);
});
