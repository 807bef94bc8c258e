// The node-agent's config file: defaults, every problem with its JSON path, the checks the schema
// cannot say (regexes, templates, actions without commands, duplicate ids), and the file's states.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentConfigError, loadAgentConfig, parseAgentConfig, type SerialDevice } from '../../node-agent/config';
import { repoRoot } from '../helpers/external-tools';
import { plugConfig, thermostatConfig } from '../helpers/serial-device';

function problems(raw: unknown): readonly string[] {
  try {
    parseAgentConfig(raw, 'c.json');
  } catch (err) {
    if (err instanceof AgentConfigError) return err.problems;
    throw err;
  }
  assert.fail(`accepted: ${JSON.stringify(raw)}`);
}

void test('an empty file is a node with no devices; serial devices get their defaults', () => {
  assert.deepEqual(parseAgentConfig({}), { version: 1, devices: [] });
  const config = parseAgentConfig({ node_id: 'rpi-hall', node_type: 'rpi', devices: [plugConfig('/dev/ttyUSB0'), thermostatConfig('/dev/ttyACM0')] });
  const plug = config.devices[0] as SerialDevice;
  assert.equal(plug.baud, 115_200);
  assert.equal(plug.reply_timeout_ms, 3000);
  assert.equal(config.devices[1]!.id, 'thermostat');
});

void test('every problem is listed with its JSON path', () => {
  const thermo = thermostatConfig('/dev/ttyACM0');
  const framing = thermo.framing as { commands: Record<string, { send: string; reply?: string }>; telemetry: { match: string }[] };
  framing.commands.set_target!.send = 'SET {celsius';
  framing.commands.read_state!.reply = '^TEMP (';
  framing.commands.dance = { send: 'DANCE' };
  framing.telemetry[0]!.match = '[';
  const list = problems({
    node_id: 'has space',
    node_type: 'toaster',
    extra: true,
    devices: [thermo, { ...plugConfig('/dev/x'), baud: 7 }, { adapter: 'usb' }, { ...plugConfig('/dev/y'), id: 'thermostat' }, 'x'],
  });
  const expect = [
    /^\/node_id: /,
    /^\/node_type: /,
    /^\/extra: /,
    /^\/devices\/0\/framing\/commands\/dance: "dance" is not one of the device's actions$/,
    /^\/devices\/0\/framing\/commands\/set_target\/send: a placeholder at character 4 is not \{param_name\}$/,
    /^\/devices\/0\/framing\/commands\/read_state\/reply: not a valid regular expression/,
    /^\/devices\/0\/framing\/telemetry\/0\/match: not a valid regular expression/,
    /^\/devices\/1\/baud: /,
    /^\/devices\/2\/adapter: must be "serial" or "ble"$/,
    /^\/devices\/3\/id: "thermostat" is used by another device$/,
    /^\/devices\/4: must be an object$/,
  ];
  for (const e of expect) assert.ok(list.some((p) => e.test(p)), `${e} in\n${list.join('\n')}`);
});

void test('line protocol: an action without a command, a duplicate action name', () => {
  const thermo = thermostatConfig('/dev/ttyACM0');
  (thermo.actions as { name: string }[]).push({ name: 'reset' }, { name: 'reset' });
  delete (thermo.framing as { commands: Record<string, { reply?: string }> }).commands.read_state!.reply;
  const list = problems({ devices: [thermo] });
  assert.ok(list.includes('/devices/0/framing/commands/read_state/reply: an error pattern needs a reply pattern (what success looks like)'), list.join('\n'));
  assert.ok(list.includes('/devices/0/actions/3/name: "reset" is declared twice'), list.join('\n'));
  assert.ok(list.includes('/devices/0/framing/commands: action "reset" has no command'), list.join('\n'));
});

void test('BLE entries: a target, actions mapped to characteristics that exist', () => {
  const ble = {
    adapter: 'ble',
    id: 'hygro',
    name: 'Hygrometer',
    type: 'temperature_sensor',
    actions: [{ name: 'read_temperature', category: 'sensor' }],
    characteristics: [{ service: '181a', characteristic: '2a6e', format: 'int16le', scale: 0.01, reading: 'temperature', field: 'celsius', read_action: 'read_temp' }],
  };
  const list = problems({ devices: [ble] });
  assert.ok(list.includes('/devices/0: give address or local_name'), list.join('\n'));
  assert.ok(list.includes('/devices/0/characteristics/0/read_action: "read_temp" is not one of the device\'s actions'), list.join('\n'));
  const ok = parseAgentConfig({ devices: [{ ...ble, address: 'AA:BB:CC:DD:EE:FF', characteristics: [{ ...ble.characteristics[0], read_action: 'read_temperature' }] }] });
  assert.equal(ok.devices[0]!.adapter, 'ble');
  assert.ok(problems({ devices: [{ ...ble, address: 'not-an-address' }] }).some((p) => p.startsWith('/devices/0/address: ')));
});

void test('the file: missing is null, unreadable JSON and non-objects are problems at /', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-agent-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.equal(await loadAgentConfig(join(dir, 'none.json')), null);
  const file = join(dir, 'c.json');
  writeFileSync(file, '{"devices": [');
  await assert.rejects(loadAgentConfig(file), (err: AgentConfigError) => /^\/: not valid JSON/.test(err.problems[0]!) && err.message.startsWith(`${file} is invalid:\n  - /: not valid JSON`));
  writeFileSync(file, '[]');
  await assert.rejects(loadAgentConfig(file), (err: AgentConfigError) => err.problems[0] === '/: must be a JSON object');
  await assert.rejects(loadAgentConfig(dir), (err: AgentConfigError) => err.problems[0] === '/: cannot read the file (EISDIR)');
  writeFileSync(file, JSON.stringify({ name: 'Hall', devices: [thermostatConfig('/dev/ttyACM0')] }));
  assert.equal((await loadAgentConfig(file))?.name, 'Hall');
});

void test('the example config in docs/node-agent.md is valid', () => {
  const docs = readFileSync(join(repoRoot(), 'docs', 'node-agent.md'), 'utf8');
  const example = /## The config file[\s\S]*?```json\n([\s\S]*?)```/.exec(docs);
  assert.ok(example, 'a json block under "The config file"');
  const config = parseAgentConfig(JSON.parse(example[1]!), 'docs/node-agent.md');
  assert.deepEqual(config.devices.map((d) => d.id), ['thermostat']);
});
