// The built node-agent against the built brain's own /v1/node (daemon/hardware), black box: a board
// without a key pairs by code, registers a serial thermostat on a real pty (socat), and the brain lists
// the device online over transport mesh with its tools and a temperature reading, and the node fresh;
// a session turn sets it and the brain's verify loop reads it back through the agent; an unplug
// shows as the device's state; revoking the node key on the brain closes the link and the agent exits 77 (EX_NOPERM).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandList, ConnectedDeviceList, NodeHealthList } from '../../protocol/hardware';
import { ROOT, SVC, startBrain } from '../helpers/brain-process';
import { runTool } from '../helpers/external-tools';
import { connect as connectSession, waitForFrame } from '../helpers/session-client';
import { plugSerialDevice, thermostatConfig } from '../helpers/serial-device';

const AGENT = join(ROOT, 'dist', 'node-agent.mjs');

function boardEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const k of ['SVC_BRAIN_URL', 'SVC_NODE_KEY_DIR', 'SVC_NODE_CONFIG', 'SVC_NODE_KEY', 'SVC_API_TOKEN', 'SVC_URL', 'NOTIFY_SOCKET', 'WATCHDOG_USEC']) if (!(k in extra)) delete env[k];
  return env;
}

async function until<T>(probe: () => Promise<T | undefined>, what: () => string, timeoutMs = 20_000): Promise<T> {
  for (let waited = 0; waited < timeoutMs; waited += 100) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what()}`);
}

void test('pair by code, register a serial thermostat, the brain lists it online with readings, a session turn sets it and it is verified, an unplug shows; a revoked key ends the agent with 77', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-agent-brain-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const brain = await startBrain();
  t.after(() => brain.stop());
  const tty = join(dir, 'ttyThermo');
  const device = await plugSerialDevice({ kind: 'thermostat', path: tty, tickMs: 200 });
  t.after(() => device.stop());
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ node_id: 'rpi-hall', name: 'Hall Pi', node_type: 'rpi', devices: [thermostatConfig(tty)] }));

  const child = spawn(process.execPath, [AGENT, 'run', '--config', config, '--brain', brain.url, '--key-dir', join(dir, 'keys')], { env: boardEnv({ HOME: dir }), stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  createInterface({ input: child.stderr }).on('line', (l) => lines.push(l));
  const code = await until(async () => lines.map((l) => /^Claim it on the brain: svc pair code (\d{6})$/.exec(l)?.[1]).find(Boolean), () => 'the pairing code', 30_000);
  const claim = await runTool(process.execPath, [SVC, 'pair', 'code', code, '--url', brain.url, '--home', brain.home], { env: boardEnv() });
  assert.equal(claim.code, 0, claim.stderr);
  const deviceId = /as (dev_\S+)/.exec(claim.stdout)?.[1];
  assert.ok(deviceId, claim.stdout);

  let last = '';
  const thermostat = await until(async () => {
    const list = (await (await brain.api('/api/devices/connected')).json()) as ConnectedDeviceList;
    last = JSON.stringify(list);
    const found = list.devices.find((d) => d.device_id === 'thermostat');
    return found?.online && found.readings.celsius !== undefined ? found : undefined;
  }, () => `the thermostat online with a reading: ${last}\n${lines.join('\n')}\n${brain.lines.filter((l) => /node|hardware/i.test(l)).slice(-20).join('\n')}`);
  assert.equal(thermostat.node_id, 'rpi-hall');
  assert.equal(thermostat.bus, 'serial');
  assert.equal(typeof thermostat.readings.celsius!.value, 'number');
  assert.equal(thermostat.readings.device_state?.value, 'connected');
  assert.deepEqual(thermostat.actions.map((a) => a.name).sort(), ['read_state', 'set_target']);
  const nodes = (await (await brain.api('/api/nodes/health')).json()) as NodeHealthList;
  const node = nodes.nodes.find((n) => n.node_id === 'rpi-hall');
  assert.ok(node?.online, JSON.stringify(nodes));
  assert.equal(node.freshness, 'fresh');

  // A session turn sets it: the brain's set_device runs set_target on the node-agent, which writes
  // "SET 23.5" to the pty; the verify contract reads read_state back and compares target.
  const session = await connectSession(brain);
  t.after(() => session.ws.close());
  const opened = session.next('session_opened');
  session.ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  const sessionId = (await opened).session_id;
  const from = session.frames.length;
  session.ws.send(JSON.stringify({ type: 'text_command', session_id: sessionId, payload: { text: 'set the thermostat to 23.5' } }));
  await waitForFrame(session.ws, session.frames, 'text_response', () => true, from);
  let commands = '';
  const command = await until(async () => {
    const list = (await (await brain.api('/api/commands/recent?device=thermostat')).json()) as CommandList;
    commands = JSON.stringify(list);
    const c = list.commands.find((x) => x.action === 'set_target');
    return c !== undefined && c.status !== 'queued' && c.status !== 'sent' && c.verified !== null ? c : undefined;
  }, () => `the set_target command to finish verified: ${commands}`);
  assert.deepEqual([command.status, command.verified, command.params, command.result], ['succeeded', true, { celsius: 23.5 }, { celsius: 23.5 }], JSON.stringify(command));

  await device.unplug();
  await until(async () => {
    const list = (await (await brain.api('/api/devices/connected')).json()) as ConnectedDeviceList;
    return list.devices.find((d) => d.device_id === 'thermostat')?.readings.device_state?.value === 'connecting' ? true : undefined;
  }, () => 'the brain to hear the device is connecting after the unplug');

  const revoke = await runTool(process.execPath, [SVC, 'pair', 'revoke', deviceId, '--url', brain.url, '--home', brain.home], { env: boardEnv() });
  assert.equal(revoke.code, 0, revoke.stderr);
  assert.equal(await exited, 77, lines.join('\n'));
  assert.ok(lines.some((l) => /refused this node's key/.test(l)), lines.join('\n'));
});
