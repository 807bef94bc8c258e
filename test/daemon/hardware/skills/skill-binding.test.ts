// daemon/hardware/skills/skill-binding.ts: which devices a skill binds and which action it picks, from
// capabilities, device type and action shape; finding a device by id or name (a property: the answer
// is always a device of the kind that the query names, or a ToolFailure); brightness scaling stays in
// range (a property); the safety class of a device's actions and the refusal that names the variant.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ToolDenied, ToolFailure } from '../../../../daemon/kernel/tool';
import { specOf } from '../../../../daemon/hardware/devices/device-manifest';
import type { DeviceAction, DeviceManifest } from '../../../../protocol/node';
import {
  beepAction,
  blinkAction,
  classOf,
  findDevice,
  guard,
  isSignal,
  isSwitch,
  isThermostat,
  levelAction,
  powerAction,
  powerValue,
  scaleLevel,
  setpointAction,
  variantName,
  type SkillDevice,
} from '../../../../daemon/hardware/skills/skill-binding';

const spec = (actions: DeviceAction[], over: Partial<DeviceManifest> = {}) => specOf({ device_id: 'd', device_type: 'gadget', name: 'Gadget', capabilities: [], actions, ...over }, 'mesh');
const device = (id: string, name: string, capabilities: string[] = ['led']): SkillDevice => ({
  spec: spec([{ name: 'set_led', params: [{ name: 'on', type: 'boolean', required: true }] }], { device_id: id, name, capabilities }),
  online: true,
  readings: {},
});

void test('power action: on (boolean), else power/state in their own vocabulary; a switch capability first, then fewer params; unfillable required params disqualify', () => {
  assert.equal(powerValue({ name: 'on', type: 'boolean' }, false), false);
  assert.equal(powerValue({ name: 'on', type: 'string' }, true), undefined);
  assert.equal(powerValue({ name: 'state', enum: ['On', 'Off'] }, false), 'Off');
  assert.equal(powerValue({ name: 'power', type: 'string' }, true), 'on');
  assert.equal(powerValue({ name: 'power', type: 'integer', minimum: 0, maximum: 1 }, true), 1);
  assert.equal(powerValue({ name: 'level', type: 'boolean' }, true), undefined);
  const s = spec(
    [
      { name: 'read', category: 'sensor', params: [{ name: 'on', type: 'boolean' }] },
      { name: 'set_mode', params: [{ name: 'on', type: 'boolean' }, { name: 'mode', type: 'string', required: true }] },
      { name: 'set_all', params: [{ name: 'on', type: 'boolean' }, { name: 'fade', type: 'integer' }] },
      { name: 'set_relay', capability: 'relay', params: [{ name: 'state', type: 'boolean' }, { name: 'fade', type: 'integer' }, { name: 'x', type: 'integer' }] },
    ],
    { capabilities: ['relay'] },
  );
  assert.equal(powerAction(s)?.action.name, 'set_relay', 'its own switch capability wins over fewer params');
  assert.equal(powerAction(s)?.param.name, 'state');
  assert.equal(powerAction(spec([{ name: 'set_mode', params: [{ name: 'on', type: 'boolean' }, { name: 'mode', type: 'string', required: true }] }])), null);
});

void test('binding: switch by capability or type with a power action; signal by led/buzzer; thermostat by setpoint (broad names only on a thermostat)', () => {
  const onOff: DeviceAction = { name: 'set', params: [{ name: 'on', type: 'boolean', required: true }] };
  assert.equal(isSwitch(spec([onOff], { device_type: 'plug' })), true);
  assert.equal(isSwitch(spec([onOff], { capabilities: ['motor'] })), false, 'a motor is not a switch');
  assert.equal(isSwitch(spec([], { capabilities: ['relay'] })), false, 'a relay without a power action');
  assert.equal(isSignal(spec([{ name: 'buzz', params: [{ name: 'duration_ms', type: 'integer' }] }], { capabilities: ['buzzer'] })), true);
  assert.equal(isSignal(spec([onOff], { capabilities: ['light'] })), false);
  const target: DeviceAction = { name: 'set', params: [{ name: 'target', type: 'number', required: true }] };
  assert.equal(isThermostat(spec([target])), false);
  assert.equal(isThermostat(spec([target], { capabilities: ['thermostat'] })), true);
  assert.equal(setpointAction(spec([target, { name: 'set_sp', params: [{ name: 'setpoint', type: 'integer' }] }], { device_type: 'thermostat' }))?.param.name, 'setpoint', 'setpoint outranks target');
  assert.equal(blinkAction(spec([{ name: 'flash_twice' }, onOff]))?.name, 'flash_twice');
  assert.equal(beepAction(spec([{ name: 'alarm', capability: 'buzzer', params: [{ name: 'duration_ms', type: 'integer' }] }]))?.name, 'alarm');
});

void test('brightness: the power action\'s own level param first, else another action; property: a scaled percentage stays within the param\'s range', () => {
  const both = spec([{ name: 'set', params: [{ name: 'on', type: 'boolean', required: true }, { name: 'brightness', type: 'integer', minimum: 0, maximum: 255 }] }]);
  assert.equal(levelAction(both, powerAction(both))?.action.name, 'set');
  const apart = spec([{ name: 'set', params: [{ name: 'on', type: 'boolean', required: true }] }, { name: 'dim', params: [{ name: 'level', type: 'number', required: true }] }]);
  assert.equal(levelAction(apart, powerAction(apart))?.action.name, 'dim');
  fc.assert(
    fc.property(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 1, max: 1000 }), fc.double({ min: 0, max: 100, noNaN: true }), fc.boolean(), (min, span, pct, integer) => {
      const v = scaleLevel({ name: 'brightness', type: integer ? 'integer' : 'number', minimum: min, maximum: min + span }, pct);
      assert.ok(v >= min && v <= min + span);
      if (integer) assert.ok(Number.isInteger(v));
    }),
  );
});

void test('property: findDevice returns a device of the kind whose id or name the query names, or throws a ToolFailure', () => {
  const names = fc.constantFrom('Desk lamp', 'Floor lamp', 'desk LAMP', 'Hall', 'Probe', 'lamp');
  const pool = fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z]{1,6}$/), names, fc.boolean()), { selector: ([id]) => id, maxLength: 6 });
  fc.assert(
    fc.property(pool, fc.oneof(names, fc.stringMatching(/^[a-z ]{1,8}$/)), (rows, query) => {
      const all = rows.map(([id, name, led]) => device(id, name, led ? ['led'] : ['temperature']));
      const bound = (d: SkillDevice) => d.spec.capabilities.includes('led');
      try {
        const found = findDevice(all, bound, 'light', query);
        assert.ok(bound(found));
        const q = query.trim().toLowerCase();
        const words = q.split(/\s+/).filter(Boolean);
        const text = `${found.spec.name} ${found.spec.deviceId}`.toLowerCase();
        assert.ok(found.spec.deviceId === q || found.spec.name.toLowerCase() === q || words.every((w) => text.includes(w)));
      } catch (err) {
        assert.ok(err instanceof ToolFailure, String(err));
      }
    }),
  );
});

void test('findDevice: an exact id or name beats partial matches; two exact names are ambiguous', () => {
  const all = [device('desk', 'Desk lamp'), device('desk2', 'Desk lamp two'), device('twin_a', 'Twin'), device('twin_b', 'twin')];
  const any = () => true;
  assert.equal(findDevice(all, any, 'light', 'desk lamp').spec.deviceId, 'desk');
  assert.equal(findDevice(all, any, 'light', 'DESK2').spec.deviceId, 'desk2');
  assert.throws(() => findDevice(all, any, 'light', 'twin'), /"twin" could be any of: Twin \(twin_a\), twin \(twin_b\)/);
});

void test('safety classes: the most cautious action\'s class, at least active; a lower variant refuses naming the one to call', () => {
  const relay = spec([{ name: 'set_relay', capability: 'relay', params: [{ name: 'on', type: 'boolean' }] }, { name: 'read', category: 'sensor' }], { capabilities: ['relay'], name: 'Pump' });
  assert.equal(classOf(relay, [relay.actions[1]!]), 'active');
  assert.equal(classOf(relay, relay.actions), 'privileged');
  assert.equal(classOf(spec([{ name: 'purge', permission_tier: 'dangerous' }]), spec([{ name: 'purge', permission_tier: 'dangerous' }]).actions), 'dangerous');
  assert.deepEqual(['active', 'privileged', 'dangerous'].map((l) => variantName('device_switch', l as 'active')), ['device_switch', 'device_switch_confirmed', 'device_switch_dangerous']);
  assert.throws(() => guard('device_switch', 'active', relay, relay.actions), (err: Error) => err instanceof ToolDenied && /Call device_switch_confirmed with the same arguments/.test(err.message));
  assert.doesNotThrow(() => guard('device_switch', 'privileged', relay, relay.actions));
  assert.doesNotThrow(() => guard('device_switch', 'dangerous', relay, relay.actions), 'a more cautious variant may run it');
});
