// daemon/hardware/skills/device-skills.ts: with generic_tools false the base skills are registered
// under the hardware owner (and no hwdev_ tools), the cautious variants follow the devices that need
// them, a restarted brain offers them again from the stored devices, and stop takes them all; with
// generic_tools true no skill is registered. An assembled brain wires them through the capability.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { DeviceSkills } from '../../../../daemon/hardware/skills/device-skills';
import { lampManifest } from '../hardware-rig';
import { relayManifest, skillRig } from './skill-rig';
import { inProcessBrain } from '../../../helpers/assembled-brain';
import { specialist } from '../../../../daemon/agent/router/specialists';

const skillNames = (names: string[]) => names.filter((n) => n.startsWith('device_')).sort();

void test('generic_tools false: the four base skills, owned by hardware; no generated tools', async (t) => {
  const s = await skillRig(t);
  s.rig.register('pi-1', { device_manifest: lampManifest() });
  assert.deepEqual(skillNames(s.rig.tools.names()), ['device_climate', 'device_signal', 'device_switch', 'device_thermostat']);
  assert.ok(skillNames(s.rig.tools.names()).every((n) => s.rig.tools.ownerOf(n) === 'hardware'));
  assert.deepEqual(s.rig.tools.names().filter((n) => n.startsWith('hwdev_')), []);
});

void test('generic_tools true: no skill; the generated tools cover the devices', async (t) => {
  const s = await skillRig(t, true);
  s.rig.register('pi-1', { device_manifest: [lampManifest(), relayManifest()] });
  assert.deepEqual(skillNames(s.rig.tools.names()), []);
  assert.ok(s.rig.tools.get('hwdev_lamp__set_power'));
});

void test('variants follow the devices; a restart offers them from the stored devices; a dangerous action gets its own; stop removes all', async (t) => {
  const s = await skillRig(t);
  s.rig.register('pi-1', { device_manifest: relayManifest() });
  s.rig.register('pi-2', { device_manifest: { ...lampManifest(), actions: [{ name: 'set_power', permission_tier: 'dangerous', params: [{ name: 'on', type: 'boolean', required: true }] }] } });
  assert.deepEqual(skillNames(s.skills.names()), ['device_climate', 'device_signal', 'device_signal_dangerous', 'device_switch', 'device_switch_confirmed', 'device_switch_dangerous', 'device_thermostat']);
  assert.equal(s.rig.tools.get('device_switch_dangerous')?.safety, 'dangerous');

  s.skills.stop();
  await s.rig.restart();
  assert.deepEqual(skillNames(s.rig.tools.names()), [], 'a new registry after the restart');
  const again = new DeviceSkills({ hardware: s.rig.hw, tools: s.rig.tools, owner: 'hardware', bus: s.rig.bus, clock: s.rig.clock, logger: pino({ level: 'silent' }), genericTools: false });
  again.start();
  assert.ok(again.names().includes('device_switch_confirmed'), 'the stored relay, offline, still has its variant');
  const out = await s.rig.tools.get('device_switch_confirmed')!.run({ device: 'garage_relay', on: false }, { sessionId: 's', turnId: 't', specialist: 'home', signal: new AbortController().signal }).catch((err: Error) => err);
  assert.ok(out instanceof Error && /device offline/.test(out.message));
  again.stop();
  assert.deepEqual(skillNames(s.rig.tools.names()), []);
});

void test('an assembled brain: hardware.generic_tools false registers the skills under the hardware capability and the home specialist is offered them; the default registers none', async (t) => {
  const off = await inProcessBrain(t, { file: { hardware: { generic_tools: false } } });
  assert.deepEqual(skillNames(off.brain.tools.names()), ['device_climate', 'device_signal', 'device_switch', 'device_thermostat']);
  assert.equal(off.brain.tools.ownerOf('device_switch'), 'hardware');
  const home = off.brain.tools.specs(specialist('home').tools ?? undefined).map((s) => s.name);
  assert.ok(['device_climate', 'device_switch'].every((n) => home.includes(n)));
  await off.stop();
  assert.deepEqual(skillNames(off.brain.tools.names()), [], 'stopped: the skills are gone');
  const on = await inProcessBrain(t);
  assert.deepEqual(skillNames(on.brain.tools.names()), []);
});
