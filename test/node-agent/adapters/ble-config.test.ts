import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bleDeviceProblems, blePlan, bleUuid } from '../../../node-agent/adapters/ble-config';
import { AgentConfigError, BLE_FORMATS, parseAgentConfig, type BleDevice } from '../../../node-agent/config';
import { BLE_VALUE_FORMATS } from '../../../node-agent/adapters/ble-codec';

const LED = '6E400002-B5A3-F393-E0A9-E50E24DCCA9E';

const entry = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  adapter: 'ble',
  id: 'thermo',
  name: 'Thermometer',
  type: 'thermometer',
  address: 'c4:7c:8d:6a:12:f0',
  hci: 'hci1',
  actions: [
    { name: 'read_temperature', category: 'sensor' },
    { name: 'set_led', params: [{ name: 'on', type: 'boolean', default: false }] },
  ],
  characteristics: [
    { service: '181A', characteristic: '2a6e', format: 'int16le', scale: 0.01, reading: 'temperature', field: 'celsius', read_action: 'read_temperature' },
    { service: '6e400001-b5a3-f393-e0a9-e50e24dcca9e', characteristic: LED, format: 'uint8', write_action: 'set_led', param: 'on', write_without_response: true },
  ],
  ...over,
});
const device = (over: Record<string, unknown> = {}): BleDevice => parseAgentConfig({ devices: [entry(over)] }).devices[0] as BleDevice;

void test('UUIDs take BlueZ\'s form: 16- and 32-bit ones expand on the Bluetooth base UUID, all lower case', () => {
  assert.equal(bleUuid('2A6E'), '00002a6e-0000-1000-8000-00805f9b34fb');
  assert.equal(bleUuid('0000181a'), '0000181a-0000-1000-8000-00805f9b34fb');
  assert.equal(bleUuid(LED), LED.toLowerCase());
  fc.assert(fc.property(fc.uuid(), (u) => assert.equal(bleUuid(bleUuid(u)), u.toLowerCase())));
});

void test('the plan: target, characteristics resolved once, readings, reads and writes with their formats', () => {
  const plan = blePlan(device());
  assert.deepEqual(plan.target, { address: 'c4:7c:8d:6a:12:f0' });
  assert.deepEqual(plan.characteristics.map((c) => c.characteristic), ['00002a6e-0000-1000-8000-00805f9b34fb', LED.toLowerCase()]);
  assert.deepEqual(plan.readings, [
    { service: '0000181a-0000-1000-8000-00805f9b34fb', characteristic: '00002a6e-0000-1000-8000-00805f9b34fb', key: '0000181a-0000-1000-8000-00805f9b34fb/00002a6e-0000-1000-8000-00805f9b34fb', format: 'int16le', scale: 0.01, field: 'celsius', eventType: 'temperature' },
  ]);
  assert.equal(plan.reads.get('read_temperature')?.field, 'celsius');
  const w = plan.writes.get('set_led');
  assert.deepEqual([w?.format, w?.param, w?.fallback, w?.mode], ['uint8', 'on', false, 'command']);
});

void test('without format or field: hex under "value"; a local name alone is the target', () => {
  const plan = blePlan(
    device({
      address: undefined,
      local_name: 'Thermo-7',
      actions: [{ name: 'raw', category: 'sensor' }],
      characteristics: [{ service: '181a', characteristic: '2a6e', reading: 'raw_bytes', read_action: 'raw' }],
    }),
  );
  assert.deepEqual(plan.target, { localName: 'Thermo-7' });
  assert.deepEqual([plan.readings[0]?.format, plan.readings[0]?.field], ['hex', 'value']);
});

void test('what the schema cannot say is listed with its path, by the config loader too', () => {
  const bad = entry({
    actions: [
      { name: 'read_temperature', category: 'actuator' },
      { name: 'set_led', params: [{ name: 'on' }] },
      { name: 'orphan' },
    ],
    characteristics: [
      { service: '181a', characteristic: '2a6e', format: 'utf8', scale: 0.01, read_action: 'read_temperature', param: 'on' },
      { service: '181a', characteristic: '2a6f', format: 'uint8', write_action: 'set_led', param: 'brightness' },
      { service: '181a', characteristic: '2a70', read_action: 'read_temperature' },
    ],
  });
  const expected = [
    '/devices/0/characteristics/0/scale: only a numeric format scales (this one is utf8)',
    '/devices/0/characteristics/0/param: only a write_action takes a param',
    '/devices/0/characteristics/0/read_action: read_temperature reads, so its category must be sensor (it is actuator)',
    '/devices/0/characteristics/1/param: "brightness" is not a param of set_led',
    '/devices/0/characteristics/2/read_action: "read_temperature" is already mapped by /devices/0/characteristics/0/read_action',
    '/devices/0/characteristics/2/read_action: read_temperature reads, so its category must be sensor (it is actuator)',
    '/devices/0/actions: "orphan" is mapped to no characteristic (read_action or write_action)',
  ];
  assert.deepEqual(bleDeviceProblems(bad as BleDevice, '/devices/0'), expected);
  assert.throws(() => parseAgentConfig({ devices: [bad] }), (err: unknown) => err instanceof AgentConfigError && expected.every((p) => err.problems.includes(p)));
  assert.throws(() => blePlan(bad as BleDevice), /ble device thermo is invalid:\n {2}\/devices\/thermo\/characteristics\/0\/scale/);
  assert.deepEqual(bleDeviceProblems(device()), []);
});

void test('the config offers exactly the formats the codec speaks', () => {
  assert.deepEqual([...BLE_FORMATS].sort(), [...BLE_VALUE_FORMATS].sort());
});
