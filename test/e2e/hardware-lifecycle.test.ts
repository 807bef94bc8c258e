// Hardware across crashes and restarts, black box: the built brain (dist/svc.mjs) and the built
// node-agent (dist/node-agent.mjs) as processes, a thermostat on a real pty (socat) at the far end.
//
// 1. The brain-local transport: with hardware.local_agent.enabled the brain starts its own node-agent
//    child for $SVC_HOME/node-agent.json; the thermostat is listed as transport `local` on node
//    brain-local; kill -9 of the child → the brain starts it again and the device comes back; a turn
//    sets it (verified); stopping the brain stops the child; a new brain on the same home starts a new
//    one and the device is back.
// 2. A board's node-agent: a frozen agent (SIGSTOP) lets a command time out cleanly and goes offline
//    by its heartbeat; kill -9 → commands fail at once with "device offline"; started again it is
//    back; the brain restarted on the same port → the agent comes back by itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandList, CommandRecord, ConnectedDevice, ConnectedDeviceList, NodeHealthList } from '../../protocol/hardware';
import type { MintedPair } from '../../protocol/pairing';
import { until } from '../helpers/poll';
import { ROOT, startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import { plugSerialDevice, thermostatConfig } from '../helpers/serial-device';

const AGENT = join(ROOT, 'dist', 'node-agent.mjs');

async function thermostat(brain: BrainProcess): Promise<ConnectedDevice | undefined> {
  const list = (await (await brain.api('/api/devices/connected')).json()) as ConnectedDeviceList;
  return list.devices.find((d) => d.device_id === 'thermostat');
}

/** Runs one dashboard turn (the offline local agent turns "set the thermostat to N" into set_device). */
async function turn(brain: BrainProcess, text: string): Promise<string> {
  const r = await brain.api('/api/dashboard/command', { method: 'POST', body: JSON.stringify({ text }) });
  assert.equal(r.status, 200, await r.clone().text());
  return JSON.stringify(await r.json());
}

async function lastCommand(brain: BrainProcess): Promise<CommandRecord | undefined> {
  return ((await (await brain.api('/api/commands/recent?device=thermostat&limit=1')).json()) as CommandList).commands[0];
}

const finished = (c: CommandRecord | undefined): CommandRecord | undefined => (c && !['queued', 'sent', 'pending_confirmation'].includes(c.status) ? c : undefined);

/** The pids of the brain's local node-agent children, from its log. */
const childPids = (brain: BrainProcess): number[] =>
  brain.lines.flatMap((l) => {
    if (!l.includes('"local node-agent started"')) return [];
    const pid = (JSON.parse(l) as { pid?: number }).pid;
    return typeof pid === 'number' ? [pid] : [];
  });

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

void test('brain-local transport: the brain runs its own node-agent, restarts it after kill -9, stops it with itself and starts it again', { timeout: 150_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-hw-local-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const tty = join(dir, 'ttyThermo');
  const device = await plugSerialDevice({ kind: 'thermostat', path: tty, tickMs: 200 });
  t.after(() => device.stop());
  const home = tempHome('svc-hw-local-home-');
  t.after(() => rmSync(home, { recursive: true, force: true }));
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ hardware: { local_agent: { enabled: true } } }));
  writeFileSync(join(home, 'node-agent.json'), JSON.stringify({ name: 'This Pi', devices: [thermostatConfig(tty)] }));

  let brain = await startBrain({ home, keepHome: true });
  t.after(() => brain.stop());
  const local = await until(() => `the thermostat online over the local agent\n${brain.lines.slice(-30).join('\n')}`, async () => {
    const d = await thermostat(brain);
    return d?.online ? d : undefined;
  });
  assert.deepEqual([local.transport, local.bus, local.node_id], ['local', 'serial', 'brain-local']);
  const [first] = childPids(brain);
  assert.ok(first !== undefined && alive(first), 'the child runs');
  assert.ok(brain.lines.some((l) => l.includes('"part":"local-agent"') && l.includes('"stream"')), 'its output is in the brain\'s log');

  // kill -9 of the child: the device goes offline, then the brain starts it again.
  process.kill(first, 'SIGKILL');
  await until(() => 'the device offline after the child died', async () => ((await thermostat(brain))?.online === false ? true : undefined));
  await until(() => `a second child\n${brain.lines.slice(-20).join('\n')}`, async () => (childPids(brain).length >= 2 ? true : undefined));
  await until(() => 'the device back online', async () => ((await thermostat(brain))?.online ? true : undefined));

  await turn(brain, 'set the thermostat to 22.5');
  const set = await until(() => 'the set to finish', async () => finished(await lastCommand(brain)));
  assert.deepEqual([set.action, set.status, set.verified, set.params], ['set_target', 'succeeded', true, { celsius: 22.5 }], JSON.stringify(set));

  // Stopping the brain stops its child; a new brain on the same home starts a new one.
  const second = childPids(brain).at(-1)!;
  assert.equal(await brain.stop(), 0);
  assert.equal(alive(second), false, 'the child stopped with the brain');
  brain = await startBrain({ home, keepHome: true });
  await until(() => 'the device online after the brain restarted', async () => ((await thermostat(brain))?.online ? true : undefined));
  assert.equal(childPids(brain).length, 1);
});

void test('a board\'s node-agent: frozen → the command times out and the node goes offline; kill -9 → "device offline" at once; back after a restart of the agent and of the brain', { timeout: 180_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-hw-board-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const tty = join(dir, 'ttyThermo');
  const device = await plugSerialDevice({ kind: 'thermostat', path: tty, tickMs: 200 });
  t.after(() => device.stop());
  const home = tempHome('svc-hw-board-home-');
  t.after(() => rmSync(home, { recursive: true, force: true }));
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ hardware: { heartbeat_ms: 3000 } }));
  const port = await freePort();
  let brain = await startBrain({ home, keepHome: true, args: ['--port', String(port)] });
  t.after(() => brain.stop());

  const minted = (await (await brain.api('/api/devices/pair', { method: 'POST', body: JSON.stringify({ kind: 'node', node_id: 'rpi-hall', name: 'Hall Pi' }) })).json()) as MintedPair;
  const completed = (await (await fetch(`${brain.url}/api/devices/pair/complete`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: minted.token }) })).json()) as { device_key: string };
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ node_id: 'rpi-hall', name: 'Hall Pi', devices: [thermostatConfig(tty)] }));
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir, SVC_NODE_KEY: completed.device_key };
  for (const k of ['SVC_BRAIN_URL', 'SVC_NODE_KEY_DIR', 'SVC_NODE_CONFIG', 'NOTIFY_SOCKET', 'WATCHDOG_USEC']) delete env[k];
  const run = (): ChildProcess => spawn(process.execPath, [AGENT, 'run', '--config', config, '--brain', `http://127.0.0.1:${port}`], { env, stdio: 'ignore' });
  let agent = run();
  t.after(() => {
    agent.kill('SIGCONT');
    agent.kill('SIGKILL');
  });
  const health = async () => ((await (await brain.api('/api/nodes/health')).json()) as NodeHealthList).nodes.find((n) => n.node_id === 'rpi-hall');
  await until(() => 'the thermostat online', async () => ((await thermostat(brain))?.online ? true : undefined));

  // Frozen: nobody answers the request, so the command ends `timeout` after its 5 s (+1 s grace), before
  // the heartbeat sweep closes the silent node at 3 × 3 s; then the node is offline.
  agent.kill('SIGSTOP');
  await turn(brain, 'set the thermostat to 21');
  const timedOut = await until(() => 'the command to time out', async () => finished(await lastCommand(brain)));
  assert.equal(timedOut.status, 'timeout', JSON.stringify(timedOut));
  const stale = await until(() => 'the node offline by its heartbeat', async () => {
    const n = await health();
    return n && !n.online ? n : undefined;
  });
  assert.equal(stale.freshness, 'offline');

  // kill -9: a command fails at once, without reaching for the node.
  agent.kill('SIGKILL');
  await turn(brain, 'set the thermostat to 21.5');
  const failed = await until(() => 'the command to fail', async () => finished(await lastCommand(brain)));
  assert.deepEqual([failed.status, failed.error], ['failed', 'device offline'], JSON.stringify(failed));

  agent = run();
  await until(() => 'back online after the agent restarted', async () => ((await thermostat(brain))?.online ? true : undefined));

  // The brain restarts on the same port: the agent finds it again by itself.
  assert.equal(await brain.stop(), 0);
  brain = await startBrain({ home, keepHome: true, args: ['--port', String(port)] });
  const listedOffline = await thermostat(brain);
  assert.ok(listedOffline, 'the stored device is listed at once');
  await until(() => 'back online after the brain restarted', async () => ((await thermostat(brain))?.online ? true : undefined));
  assert.equal((await health())?.freshness, 'fresh');
  await turn(brain, 'set the thermostat to 20');
  const again = await until(() => 'the set after the restart', async () => finished(await lastCommand(brain)));
  assert.deepEqual([again.status, again.verified], ['succeeded', true]);
});
