// A BLE sensor end to end, black box: the built brain and the built node-agent as processes; the agent
// talks to BlueZ's D-Bus API on a private bus (dbus-daemon), served by the fake bluetoothd of
// test/helpers/fake-bluez.ts with a simulated thermometer (temperature notifying int16le centi-degrees,
// a writable LED register). The brain lists the thermometer (bus ble) with its reading; a notification
// reaches GET /api/devices/connected and a /v1/session client as telemetry; a turn switches the LED,
// which the fake peripheral records and the brain verifies by reading it back; a dropped radio link
// is seen and recovered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandList, ConnectedDevice, ConnectedDeviceList } from '../../protocol/hardware';
import type { MintedPair } from '../../protocol/pairing';
import { until } from '../helpers/poll';
import { ROOT, startBrain, type BrainProcess } from '../helpers/brain-process';
import { privateBusMissing, startPrivateBus } from '../helpers/fake-bluez-bus';
import { centi, LED, LED_SERVICE, startFakeBluez, TEMPERATURE, THERMO_ADDRESS, thermometer } from '../helpers/fake-bluez';
import { connect as connectSession } from '../helpers/session-client';

const AGENT = join(ROOT, 'dist', 'node-agent.mjs');
const ADDRESS = THERMO_ADDRESS;
const THERMOMETER = thermometer();

const DEVICE = {
  adapter: 'ble',
  id: 'thermo',
  name: 'Bedroom thermometer',
  type: 'thermometer',
  local_name: 'Thermo-7',
  capabilities: ['temperature', 'led'],
  actions: [
    { name: 'read_temperature', category: 'sensor' },
    { name: 'read_led', category: 'sensor' },
    { name: 'set_led', category: 'actuator', permission_tier: 'active', params: [{ name: 'on', type: 'boolean', required: true }], verify: { via: 'read_led', field: 'on', expect: '$on', delay_ms: 100 } },
  ],
  characteristics: [
    { service: '181a', characteristic: '2a6e', format: 'int16le', scale: 0.01, reading: 'temperature', field: 'celsius', read_action: 'read_temperature' },
    { service: LED_SERVICE, characteristic: LED, format: 'uint8', field: 'on', read_action: 'read_led', write_action: 'set_led', param: 'on' },
  ],
};

async function thermo(brain: BrainProcess): Promise<ConnectedDevice | undefined> {
  return ((await (await brain.api('/api/devices/connected')).json()) as ConnectedDeviceList).devices.find((d) => d.device_id === 'thermo');
}

const missing = privateBusMissing();

void test('a BLE thermometer through the built node-agent and BlueZ\'s D-Bus API: readings, telemetry to a session, an LED switched and verified, a dropped link recovered', { skip: missing ?? false, timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ble-e2e-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bus = await startPrivateBus(dir);
  t.after(() => bus.close());
  const bluez = await startFakeBluez(bus.address, [THERMOMETER]);
  t.after(() => bluez.close());
  const brain = await startBrain();
  t.after(() => brain.stop());

  const minted = (await (await brain.api('/api/devices/pair', { method: 'POST', body: JSON.stringify({ kind: 'node', node_id: 'rpi-bedroom', name: 'Bedroom Pi' }) })).json()) as MintedPair;
  const { device_key: key } = (await (await fetch(`${brain.url}/api/devices/pair/complete`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: minted.token }) })).json()) as { device_key: string };
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ node_id: 'rpi-bedroom', name: 'Bedroom Pi', devices: [DEVICE] }));
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir, SVC_NODE_KEY: key, DBUS_SYSTEM_BUS_ADDRESS: bus.address };
  for (const k of ['SVC_BRAIN_URL', 'SVC_NODE_KEY_DIR', 'SVC_NODE_CONFIG', 'NOTIFY_SOCKET', 'WATCHDOG_USEC']) delete env[k];
  const agent = spawn(process.execPath, [AGENT, 'run', '--config', config, '--brain', brain.url], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const agentErr: string[] = [];
  agent.stderr.on('data', (d: Buffer) => agentErr.push(d.toString()));
  t.after(() => agent.kill('SIGKILL'));

  const listed = await until(() => `the thermometer online with its reading\n${agentErr.join('')}`, async () => {
    const d = await thermo(brain);
    return d?.online && d.readings.celsius?.value === 21.5 ? d : undefined;
  });
  assert.deepEqual([listed.transport, listed.bus, listed.node_id], ['mesh', 'ble', 'rpi-bedroom']);
  assert.deepEqual(listed.actions.map((a) => a.tool).sort(), ['hwdev_thermo__read_led', 'hwdev_thermo__read_temperature', 'hwdev_thermo__set_led']);

  // A notification from the peripheral: the brain's reading and a telemetry frame on /v1/session.
  const session = await connectSession(brain);
  t.after(() => session.ws.close());
  bluez.notify(ADDRESS, TEMPERATURE, centi(23.25));
  await until(() => 'the notified reading', async () => ((await thermo(brain))?.readings.celsius?.value === 23.25 ? true : undefined));
  await until(() => 'a telemetry frame', async () => (session.frames.some((f) => f.type === 'telemetry' && f.payload.source === 'thermo' && f.payload.readings.celsius === 23.25) ? true : undefined));

  // A turn switches the LED: the fake peripheral records the write, the brain reads it back.
  const r = await brain.api('/api/dashboard/command', { method: 'POST', body: JSON.stringify({ text: 'turn on the bedroom thermometer' }) });
  assert.equal(r.status, 200, await r.text());
  const command = await until(() => 'the LED command', async () => {
    const c = ((await (await brain.api('/api/commands/recent?device=thermo&limit=1')).json()) as CommandList).commands[0];
    return c && c.status !== 'queued' && c.status !== 'sent' ? c : undefined;
  });
  assert.deepEqual([command.action, command.status, command.verified, command.params], ['set_led', 'succeeded', true, { on: true }], JSON.stringify(command));
  assert.deepEqual(bluez.writes(ADDRESS, LED).map((b) => [...b]), [[1]]);

  // The radio link drops: the agent reconnects by itself and the device keeps working.
  const before = bluez.connects(ADDRESS);
  bluez.dropConnection(ADDRESS);
  await until(() => 'a reconnect over BlueZ', async () => (bluez.connects(ADDRESS) > before ? true : undefined));
  await until(() => 'connected again', async () => ((await thermo(brain))?.readings.device_state?.value === 'connected' ? true : undefined));
  bluez.notify(ADDRESS, TEMPERATURE, centi(19.75));
  await until(() => 'a reading after the reconnect', async () => ((await thermo(brain))?.readings.celsius?.value === 19.75 ? true : undefined));
});
