// The simulated peripherals: the demo's manifests as the brain reads them, actions checked against
// their declared params and applied to state, readings as a bounded walk, and the --peripherals file
// checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import fc from 'fast-check';
import { BridgedPeripheral } from '../../protocol/node';
import { DEMO_PERIPHERALS, parsePeripheralsFile, Peripheral, PeripheralError, PeripheralSet } from '../../phone-bridge/peripherals';

void test('the demo registers as valid bridged peripherals (protocol/node.ts), transport phone_ble, without the simulation', () => {
  const set = new PeripheralSet(DEMO_PERIPHERALS);
  for (const p of set.all()) {
    const entry = p.registration();
    assert.ok(Value.Check(BridgedPeripheral, entry), JSON.stringify([...Value.Errors(BridgedPeripheral, entry)][0]));
    assert.equal(entry.manifest?.transport?.kind, 'phone_ble');
    assert.ok(!JSON.stringify(entry).includes('effect'));
  }
  assert.deepEqual(set.get('bulb')?.manifest().actions.find((a) => a.name === 'set_power')?.verify, { via: 'get_state', field: 'on', expect: '$on', delay_ms: 0, retries: 1 });
  assert.equal(set.get('nope'), undefined);
});

void test('run: a parameter sets state, a read returns it, bad parameters and unknown actions are refused and change nothing', () => {
  const bulb = new Peripheral(DEMO_PERIPHERALS.peripherals[0]!);
  assert.deepEqual(bulb.run('set_power', { on: true }), { on: true, brightness: 80 });
  assert.deepEqual(bulb.run('get_state', {}), { on: true, brightness: 80 });
  assert.throws(() => bulb.run('set_power', { on: 1 }), new PeripheralError('set_power: parameter on must be boolean'));
  assert.throws(() => bulb.run('set_power', {}), new PeripheralError('set_power: parameter on is required'));
  assert.throws(() => bulb.run('dim', {}), new PeripheralError('bulb has no action dim'));
  assert.deepEqual(bulb.snapshot(), { on: true, brightness: 80 });
  const dimmer = new Peripheral({
    device_id: 'dimmer',
    kind: 'light',
    name: 'Dimmer',
    capabilities: ['led'],
    state: { level: 0, mode: 'warm' },
    actions: [
      { name: 'set_level', params: [{ name: 'level', type: 'integer', minimum: 0, maximum: 100, default: 50 }, { name: 'mode', type: 'string', enum: ['warm', 'cold'] }], effect: { set: { level: '$level', mode: '$mode', touched: true } } },
    ],
  });
  assert.deepEqual(dimmer.run('set_level', {}), { level: 50, mode: null, touched: true }, 'a default fills a missing parameter');
  assert.deepEqual(dimmer.run('set_level', { level: 7, mode: 'cold' }), { level: 7, mode: 'cold', touched: true });
  assert.throws(() => dimmer.run('set_level', { level: 7.5 }), /must be integer/);
  assert.throws(() => dimmer.run('set_level', { mode: 'blue' }), /must be one of "warm", "cold"/);
});

void test('property: readings stay whole numbers within min..max and move at most one step', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 100 }), fc.integer({ min: 1, max: 20 }), fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 50 }), (a, b, step, draws) => {
      const [min, max] = a <= b ? [a, b] : [b, a];
      const reading = { event_type: 'heart_rate', field: 'bpm', every_ms: 1000, min, max, step };
      const strap = new Peripheral({ device_id: 'strap', kind: 'hr', name: 'Strap', capabilities: ['heart_rate'], state: { bpm: min }, actions: [], readings: [reading] });
      let last = min;
      for (const d of draws) {
        const v = strap.nextReading(reading, () => d);
        assert.ok(Number.isInteger(v) && v >= min && v <= max, `${v} outside ${min}..${max}`);
        assert.ok(Math.abs(v - last) <= step + 0.5, `${last} -> ${v} is more than a step of ${step}`);
        assert.equal(strap.snapshot().bpm, v);
        last = v;
      }
    }),
  );
});

void test('parsePeripheralsFile: the demo round-trips; bad JSON, schema problems, repeated ids and min above max are refused', () => {
  assert.deepEqual(parsePeripheralsFile(JSON.stringify(DEMO_PERIPHERALS)), DEMO_PERIPHERALS);
  assert.throws(() => parsePeripheralsFile('{'), /^PeripheralError: not JSON/);
  assert.throws(() => parsePeripheralsFile('{"peripherals":[]}'), /\/peripherals Expected array length to be greater or equal to 1/);
  assert.throws(() => parsePeripheralsFile(JSON.stringify({ peripherals: [{ ...DEMO_PERIPHERALS.peripherals[0]!, device_id: 'bad id' }] })), /\/peripherals\/0\/device_id/);
  assert.throws(() => parsePeripheralsFile(JSON.stringify({ peripherals: [DEMO_PERIPHERALS.peripherals[0]!, DEMO_PERIPHERALS.peripherals[0]!] })), /device_id bulb appears twice/);
  const strap = DEMO_PERIPHERALS.peripherals[1]!;
  assert.throws(() => parsePeripheralsFile(JSON.stringify({ peripherals: [{ ...strap, readings: [{ ...strap.readings![0]!, min: 100, max: 50 }] }] })), /reading heart_rate has min above max/);
});
