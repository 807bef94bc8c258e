// daemon/hardware/skills/actuator-skills.ts on the device layer (skill-rig.ts: real SQLite, real
// ToolRegistry, scripted nodes behind the NodeLinks seam): device_switch, device_signal and
// device_thermostat find their device and action, run recorded commands (read back through
// /api/commands), report the verify loop, finish a cancelled blink, and a relay is switched only through the real approvals
// hook and tool runner, after the user approved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { CommandRecord } from '../../../../protocol/hardware';
import { APPROVAL_MIGRATIONS, ApprovalQueue } from '../../../../daemon/approvals/approval-queue';
import { Approvals } from '../../../../daemon/approvals/approvals';
import { ToolRunner } from '../../../../daemon/agent/tools/tool-runner';
import { agentMetrics } from '../../../../daemon/agent/agent-metrics';
import { SecretScrubber } from '../../../../daemon/agent/tools/secret-scrubber';
import { createMetrics } from '../../../../daemon/metrics/metrics';
import { DeviceSkills } from '../../../../daemon/hardware/skills/device-skills';
import { hardwareRig, lampManifest, lampScript, settingsWith } from '../hardware-rig';
import { acceptAll, dimmerManifest, relayManifest, skillRig, thermostatManifest, thermostatScript } from './skill-rig';

const sent = (s: Awaited<ReturnType<typeof skillRig>>) => s.rig.nodes.requests.map((r) => [r.request.device_id, r.request.name, r.request.params]);

void test('device_switch: a lamp by name, case-insensitive, switched and verified; the command is recorded under the skill', async (t) => {
  const s = await skillRig(t);
  s.rig.nodes.scripts.set('pi-1', lampScript());
  s.rig.register('pi-1', { device_manifest: lampManifest() });
  const out = await s.call('device_switch', { device: 'DESK LAMP', on: true });
  assert.equal(out.summary, 'Desk lamp: on (verified).');
  assert.deepEqual(sent(s), [
    ['lamp', 'set_power', { on: true }],
    ['lamp', 'read_power', {}],
  ]);
  const record = (await s.rig.inject(`/api/commands/${out.data.commands[0]!.command_id}`)).json() as CommandRecord;
  assert.deepEqual([record.tool, record.turn_id, record.status, record.verified], ['device_switch', 'turn-1', 'succeeded', true]);
  assert.equal(s.rig.tools.get('device_switch')?.safety, 'active');
  assert.equal(s.rig.tools.get('hwdev_lamp__set_power'), undefined, 'generic_tools false: no generated tools');
});

void test('device_switch: brightness goes into the power action when it takes it, scaled onto its range; a device without one is refused before anything runs', async (t) => {
  const s = await skillRig(t);
  s.rig.nodes.scripts.set('pi-1', acceptAll);
  s.rig.nodes.scripts.set('pi-2', lampScript());
  s.rig.register('pi-1', { device_manifest: dimmerManifest() });
  s.rig.register('pi-2', { device_manifest: lampManifest() });
  const out = await s.call('device_switch', { device: 'ceiling', on: true, brightness: 40 });
  assert.equal(out.summary, 'Ceiling light: on at 40 %.');
  assert.deepEqual(sent(s), [['ceiling', 'set_light', { power: 'ON', brightness: 102 }]]);
  await s.call('device_switch', { device: 'ceiling', on: false });
  assert.deepEqual(sent(s)[1], ['ceiling', 'set_light', { power: 'OFF' }]);
  await assert.rejects(s.call('device_switch', { device: 'lamp', on: true, brightness: 50 }), { name: 'ToolFailure', message: /Desk lamp \(lamp\) has no brightness action/ });
  assert.equal(s.rig.nodes.requests.length, 2);
});

void test('device_switch: ambiguous names list the candidates, an unknown name lists the switches, a sensor is not a switch, none at all is said so', async (t) => {
  const s = await skillRig(t);
  await assert.rejects(s.call('device_switch', { device: 'lamp', on: true }), { name: 'ToolFailure', message: /there is no switch, relay or light here/ });
  s.rig.register('pi-1', { device_manifest: [lampManifest({ device_id: 'desk_lamp' }), lampManifest({ device_id: 'floor_lamp', name: 'Floor lamp' }), { device_id: 'probe', device_type: 'sensor', name: 'Probe', capabilities: ['temperature'], actions: [] }] });
  await assert.rejects(s.call('device_switch', { device: 'lamp', on: true }), (err: Error) => {
    assert.equal(err.name, 'ToolFailure');
    assert.match(err.message, /"lamp" could be any of: .*Desk lamp \(desk_lamp\)/);
    assert.match(err.message, /Floor lamp \(floor_lamp\)/);
    return true;
  });
  await assert.rejects(s.call('device_switch', { device: 'kitchen', on: true }), { message: /no switch, relay or light is named "kitchen"; the switch, relay or light devices: Desk lamp \(desk_lamp\), Floor lamp \(floor_lamp\)/ });
  await assert.rejects(s.call('device_switch', { device: 'probe', on: true }), { message: /Probe \(probe\) is not a switch, relay or light/ });
  s.rig.nodes.scripts.set('pi-1', lampScript());
  assert.equal((await s.call('device_switch', { device: 'floor', on: true })).data.device_id, 'floor_lamp', 'a unique partial name is enough');
});

void test('a relay needs confirmation through the skill too: device_switch refuses it, device_switch_confirmed is held by approvals and runs once approved', async (t) => {
  const s = await skillRig(t);
  s.rig.nodes.scripts.set('pi-1', acceptAll);
  assert.equal(s.rig.tools.get('device_switch_confirmed'), undefined, 'no relay yet: no confirmed variant');
  s.rig.register('pi-1', { device_manifest: relayManifest() });
  assert.equal(s.rig.tools.get('device_switch_confirmed')?.safety, 'privileged');

  const metrics = createMetrics(true);
  s.rig.sqlite.migrate('approvals', APPROVAL_MIGRATIONS);
  const approvals = new Approvals({
    queue: new ApprovalQueue(s.rig.sqlite, s.rig.clock, 60),
    settings: { policies: { passive: 'auto', active: 'auto', privileged: 'ask', dangerous: 'ask' }, tools: {} },
    tools: s.rig.tools,
    bus: s.rig.bus,
    gauge: metrics.registry.gauge('approvals', { name: 'svc_supervisor_approval_queue', help: 'pending' }),
    clock: s.rig.clock,
    logger: pino({ level: 'silent' }),
  });
  const runner = new ToolRunner({ registry: s.rig.tools, permissions: approvals, scrubber: new SecretScrubber(), metrics: agentMetrics(metrics.registry, s.rig.tools), logger: pino({ level: 'silent' }) });
  const ctx = { sessionId: 's1', turnId: 'turn-9', specialist: 'home' as const, signal: new AbortController().signal };
  const offered = new Set(s.rig.tools.names());
  const args = { device: 'garage door relay', on: true };

  const plain = await runner.run({ id: 'c1', name: 'device_switch', arguments: args }, offered, ctx);
  assert.equal(plain.status, 'denied');
  assert.match(plain.summary, /Garage door relay \(garage_relay\): set_relay is an action that needs the user's confirmation; device_switch does not run it\. Call device_switch_confirmed/);
  const held = await runner.run({ id: 'c2', name: 'device_switch_confirmed', arguments: args }, offered, ctx);
  assert.equal(held.status, 'pending_approval');
  assert.equal(s.rig.nodes.requests.length, 0, 'nothing reaches the relay before the user approves');

  const requestId = (JSON.parse(held.message.content) as { data: { approval_request_id: string } }).data.approval_request_id;
  const approved = await approvals.approve(requestId, 's1');
  assert.equal(approved.result?.status, 'ok');
  assert.equal(approved.summary, 'Garage door relay: on.');
  assert.deepEqual(sent(s), [['garage_relay', 'set_relay', { on: true }]]);
  const recent = ((await s.rig.inject('/api/commands/recent?device=garage_relay')).json() as { commands: CommandRecord[] }).commands;
  assert.deepEqual(recent.map((c) => [c.tool, c.turn_id, c.status]), [['device_switch_confirmed', 'turn-9', 'succeeded']]);

  s.rig.hw.listener.registered({ nodeId: 'pi-1', register: { node_id: 'pi-1', node_type: 'rpi', capabilities: [] }, heartbeatMs: 10_000, connectedAt: s.rig.clock.ms });
  assert.equal(s.rig.tools.get('device_switch_confirmed'), undefined, 'the relay gone: its variant goes too');
});

void test('device_thermostat: the target is set and the verify loop\'s answer reported; out of range refused; a set that does not stick is not verified', async (t) => {
  const s = await skillRig(t);
  const state = { target: 18, drop: 0 };
  s.rig.nodes.scripts.set('pi-1', thermostatScript(state));
  s.rig.register('pi-1', { device_manifest: thermostatManifest() });
  const out = await s.call('device_thermostat', { device: 'hall thermostat', target_celsius: 21.5 });
  assert.equal(out.summary, 'Hall thermostat: verified: Hall thermostat now reads target 21.5 °C.');
  assert.equal(out.data.verified, true);
  assert.equal(state.target, 21.5);
  assert.deepEqual(sent(s).map((r) => r[1]), ['set_target', 'read_state']);

  await assert.rejects(s.call('device_thermostat', { device: 'hall_thermostat', target_celsius: 35 }), { name: 'ToolFailure', message: /accepts a target from 5 to 30 °C/ });

  state.drop = 2;
  const stuck = await s.call('device_thermostat', { device: 'hall_thermostat', target_celsius: 23 });
  assert.equal(stuck.data.verified, false);
  assert.match(stuck.summary, /not verified: Hall thermostat did not read back target 23 °C after 1 retry/);
  assert.deepEqual(sent(s).slice(2).map((r) => r[1]), ['set_target', 'read_state', 'set_target', 'read_state'], 'one re-issue, as the contract says');

  await assert.rejects(s.call('device_thermostat', { device: 'x', target_celsius: 20 }), { message: /no thermostat is named "x"; the thermostat devices: Hall thermostat \(hall_thermostat\)/ });
});

void test('device_thermostat: an offline thermostat answers at once with device offline', async (t) => {
  const s = await skillRig(t);
  s.rig.register('pi-1', { device_manifest: thermostatManifest() });
  s.rig.nodes.disconnect('pi-1');
  await assert.rejects(s.call('device_thermostat', { device: 'hall_thermostat', target_celsius: 20 }), { name: 'ToolFailure', message: /set_target: device offline/ });
});

void test('device_signal: a buzzer beeps with its duration, an LED without a blink action blinks as on, wait, off; what a device cannot do is said', async (t) => {
  const s = await skillRig(t);
  s.rig.nodes.scripts.set('buzzer-1', acceptAll);
  s.rig.nodes.scripts.set('led-1', acceptAll);
  s.rig.register('buzzer-1', { capabilities: ['buzzer'], name: 'Door buzzer' });
  s.rig.register('led-1', { capabilities: ['led'], name: 'Status LED' });
  const beep = await s.call('device_signal', { device: 'door buzzer', pattern: 'beep', duration_ms: 300 });
  assert.equal(beep.summary, 'Door buzzer: beep.');
  const blink = await s.call('device_signal', { device: 'status led', pattern: 'blink', duration_ms: 250 });
  assert.equal(blink.summary, 'Status LED: blink.');
  assert.deepEqual(sent(s), [
    ['buzzer_1', 'buzz', { duration_ms: 300 }],
    ['led_1', 'set_led', { on: true }],
    ['led_1', 'set_led', { on: false }],
  ]);
  assert.deepEqual(s.waits, [250]);
  await assert.rejects(s.call('device_signal', { device: 'door buzzer', pattern: 'on' }), { name: 'ToolFailure', message: /Door buzzer \(buzzer_1\) cannot be switched on; it can: beep/ });
  await assert.rejects(s.call('device_signal', { device: 'status led', pattern: 'beep' }), { message: /cannot beep; it can: on, off/ });
  await assert.rejects(s.call('device_signal', { device: 'door buzzer', pattern: 'beep', duration_ms: 10_001 }), /bad arguments/);
});

void test('device_signal: a refused or failed step ends the call, naming what was done before it', async (t) => {
  const s = await skillRig(t);
  let calls = 0;
  s.rig.nodes.scripts.set('led-1', (r) => (++calls === 2 ? { action_id: r.action_id, success: false, error: 'gpio busy' } : { action_id: r.action_id, success: true, result: {} }));
  s.rig.register('led-1', { capabilities: ['led'], name: 'Status LED' });
  await assert.rejects(s.call('device_signal', { device: 'led_1', pattern: 'blink' }), { name: 'ToolFailure', message: 'Status LED (led_1) set_led: gpio busy (done before it: set_led)' });
  assert.deepEqual(s.waits, [500], 'the default blink');
});

void test('device_signal: a turn cancelled during a blink\'s wait still switches the LED off again', async (t) => {
  const rig = await hardwareRig(t, settingsWith({ generic_tools: false }));
  const skills = new DeviceSkills({ hardware: rig.hw, tools: rig.tools, owner: 'hardware', bus: rig.bus, clock: rig.clock, logger: pino({ level: 'silent' }), genericTools: false });
  skills.start();
  t.after(() => skills.stop());
  rig.nodes.scripts.set('led-1', acceptAll);
  rig.register('led-1', { capabilities: ['led'], name: 'Status LED' });
  const cancelled = new AbortController();
  cancelled.abort();
  await rig.tools.get('device_signal')!.run({ device: 'status led', pattern: 'blink', duration_ms: 10_000 }, { sessionId: 's', turnId: 't', specialist: 'home', signal: cancelled.signal });
  assert.deepEqual(rig.nodes.requests.map((r) => r.request.params), [{ on: true }, { on: false }]);
});
