// daemon/hardware/devices/device-directory.ts: set_device's change picks the actuator action whose params take
// it, runs it as a recorded, verified command; an unknown device is NOT_FOUND; an action that needs
// confirmation is refused (recorded denied, nothing sent).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CommandRecord } from '../../../../protocol/hardware';
import { hardwareRig, lampManifest, lampScript } from '../hardware-rig';

void test('set_device through the directory: picks the action by its params, runs it as a command; unknown device NOT_FOUND; confirmation refused', async (t) => {
  const rig = await hardwareRig(t);
  rig.nodes.scripts.set('pi-1', lampScript());
  rig.register('pi-1', {
    device_manifest: [
      lampManifest(),
      {
        device_id: 'heater',
        device_type: 'relay',
        name: 'Heater',
        capabilities: ['relay'],
        actions: [
          { name: 'switch', params: [{ name: 'on', type: 'boolean', required: true }] },
          { name: 'set_level', params: [{ name: 'level', type: 'integer', required: true }] },
        ],
      },
    ],
  });
  const after = await rig.hw.devices.set('lamp', { power: 'on' });
  assert.equal(after.id, 'lamp');
  assert.ok(!('verified' in after.state) && !('command_id' in after.state), `the state holds what the device reports, not the command's bookkeeping: ${JSON.stringify(after.state)}`);
  assert.deepEqual(rig.nodes.requests[0]?.request.params, { on: true });
  const [last] = ((await rig.inject('/api/commands/recent?device=lamp&limit=1')).json() as { commands: CommandRecord[] }).commands;
  assert.deepEqual([last?.action, last?.status, last?.tool, last?.verified], ['set_power', 'succeeded', null, true]);
  await rig.hw.devices.set('lamp', { power: 'off' }, { tool: 'set_device', turnId: 'turn_42' });
  const [asked] = ((await rig.inject('/api/commands/recent?device=lamp&limit=1')).json() as { commands: CommandRecord[] }).commands;
  assert.deepEqual([asked?.params, asked?.tool, asked?.turn_id], [{ on: false }, 'set_device', 'turn_42'], 'the command names the tool and turn that asked');
  await assert.rejects(rig.hw.devices.set('nope', { power: 'on' }), (err: unknown) => (err as { code?: string }).code === 'NOT_FOUND');
  await assert.rejects(rig.hw.devices.set('lamp', { colour: 'red' }), /has no action that takes colour/);
  await assert.rejects(rig.hw.devices.set('heater', { level: 'high' }), /set_level: level: Expected integer/, 'checked against the action\'s schema before anything runs');
  await assert.rejects(rig.hw.devices.set('heater', { power: 'off' }), (err: unknown) => (err as Error).name === 'ToolDenied' && /hwdev_heater__switch/.test((err as Error).message));
  const [denied] = ((await rig.inject('/api/commands/recent?device=heater')).json() as { commands: CommandRecord[] }).commands;
  assert.equal(denied?.status, 'denied');
  assert.equal(rig.nodes.requests.filter((r) => r.request.device_id === 'heater').length, 0);
});
