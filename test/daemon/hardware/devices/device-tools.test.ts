// daemon/hardware/devices/device-tools.ts: tool names stay valid registry names of at most 64 characters (a
// property), argument schemas check type, required, enum, bounds and unknown keys through the real
// ToolRegistry, and the safety mapping of categories, tiers, requires_confirmation and confirmation
// capabilities.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ToolRegistry } from '../../../../daemon/kernel/tool-registry';
import { defineTool } from '../../../../daemon/kernel/tool';
import { argumentSchema, needsConfirmation, optInOf, safetyOf, toolName, withDefaults } from '../../../../daemon/hardware/devices/device-tools';
import { normalizeAction, type DeviceAction } from '../../../../protocol/node';

const action = (a: DeviceAction) => normalizeAction(a)!;

void test('property: tool names are registry-valid, at most 64 characters, and distinct for distinct device/action pairs', () => {
  const id = fc.stringMatching(/^[A-Za-z0-9_]{1,64}$/);
  fc.assert(
    fc.property(id, id, id, (device, a, b) => {
      const n = toolName(device, a);
      assert.match(n, /^[a-z][a-z0-9_]{0,63}$/);
      assert.ok(n.startsWith('hwdev_'));
      if (`hwdev_${device}__${a}`.length <= 64) assert.equal(n, `hwdev_${device}__${a}`.toLowerCase());
      if (a.toLowerCase() !== b.toLowerCase()) assert.notEqual(n, toolName(device, b));
    }),
  );
  const long = toolName('d'.repeat(64), 'set_everything_at_once');
  assert.equal(long.length, 64);
  assert.match(long, /_[0-9a-f]{8}$/);
});

void test('argument schemas: type, required, enum, bounds, no unknown keys (checked by the real registry); defaults filled in', () => {
  const params = action({
    name: 'set',
    params: [
      { name: 'on', type: 'boolean', required: true },
      { name: 'level', type: 'integer', minimum: 0, maximum: 100, default: 50 },
      { name: 'mode', enum: ['heat', 'cool'] },
      { name: 'note', type: 'string', description: 'free text' },
    ],
  }).params;
  const tools = new ToolRegistry();
  tools.register('hardware', defineTool({ spec: { name: 'hwdev_x__set', description: 'x', parameters: argumentSchema(params) }, safety: 'active', run: async () => ({ summary: '' }) }));
  assert.deepEqual(tools.problems('hwdev_x__set', { on: true, level: 3, mode: 'heat', note: 'n' }), []);
  assert.notDeepEqual(tools.problems('hwdev_x__set', { level: 3 }), [], 'required');
  assert.notDeepEqual(tools.problems('hwdev_x__set', { on: 'yes' }), [], 'type');
  assert.notDeepEqual(tools.problems('hwdev_x__set', { on: true, level: 101 }), [], 'maximum');
  assert.notDeepEqual(tools.problems('hwdev_x__set', { on: true, level: 1.5 }), [], 'integer');
  assert.notDeepEqual(tools.problems('hwdev_x__set', { on: true, mode: 'dry' }), [], 'enum');
  assert.notDeepEqual(tools.problems('hwdev_x__set', { on: true, colour: 'red' }), [], 'additionalProperties false');
  assert.deepEqual(withDefaults(params, { on: false }), { on: false, level: 50 });
});

void test('safety: sensors passive, other categories at least active, tiers kept, confirmation at least privileged', () => {
  const caps: string[] = [];
  assert.equal(safetyOf(action({ name: 'read', category: 'sensor' }), caps), 'passive');
  assert.equal(safetyOf(action({ name: 'blink' }), caps), 'active', 'default category actuator, default tier passive → active');
  assert.equal(safetyOf(action({ name: 'blink', permission_tier: 'dangerous' }), caps), 'dangerous');
  assert.equal(safetyOf(action({ name: 'blink', requires_confirmation: true }), caps), 'privileged');
  assert.equal(safetyOf(action({ name: 'open', capability: 'valve' }), caps), 'privileged');
  assert.equal(safetyOf(action({ name: 'switch' }), ['relay']), 'privileged', 'the device capability counts when the action names none');
  assert.equal(safetyOf(action({ name: 'read_state', category: 'sensor' }), ['relay']), 'passive', 'reading a relay needs no confirmation');
  assert.equal(needsConfirmation(action({ name: 'x', capability: 'led' }), ['relay']), false, 'the action\'s own capability wins');
  assert.equal(optInOf(action({ name: 'snap', category: 'sensor' }), ['camera']), 'camera');
  assert.equal(optInOf(action({ name: 'snap', capability: 'led' }), ['camera']), null);
});
