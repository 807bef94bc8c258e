// `node-agent run` end to end, black box: the built dist/node-agent.mjs as a process, a simulated
// thermostat on a real pty (socat; test/helpers/serial-device.ts) driven through serialport, a brain
// side of /v1/node that speaks the real protocol (test/helpers/hup-brain.ts), and systemd's notify
// socket (test/helpers/notify-socket.ts). Covered: the config file's problems with their paths (exit
// 78); register with the device's manifest, READY=1 after the ack with a STATUS= line, WATCHDOG=1
// pings; telemetry; an action set and read back; unplug (actions fail at once, the brain hears the
// device is connecting) and replug; a brain restart; the key revoked (exit 77); SIGTERM (node_bye,
// exit 0); and, against the built brain, a board without a key pairing by code before it links.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { newDeviceKey } from '../../mesh/pair-token';
import { writeNodeKey } from '../../mesh/node-key-store';
import { EX_CONFIG, EX_NOPERM } from '../../node-agent/run-command';
import { ROOT, SVC, startBrain } from '../helpers/brain-process';
import { runTool } from '../helpers/external-tools';
import { startHupBrain } from '../helpers/hup-brain';
import { listenNotify } from '../helpers/notify-socket';
import { plugSerialDevice, thermostatConfig } from '../helpers/serial-device';

const AGENT = join(ROOT, 'dist', 'node-agent.mjs');

function boardEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const k of ['SVC_BRAIN_URL', 'SVC_NODE_KEY_DIR', 'SVC_NODE_CONFIG', 'SVC_API_TOKEN', 'SVC_URL', 'NOTIFY_SOCKET', 'WATCHDOG_USEC']) if (!(k in extra)) delete env[k];
  return env;
}

const scratch = (t: { after(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-agent-run-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

interface Agent {
  out: string[];
  err: string[];
  exited: Promise<number | null>;
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
  signal(s: NodeJS.Signals): void;
}

function startAgent(args: readonly string[], env: NodeJS.ProcessEnv): Agent {
  const child = spawn(process.execPath, [AGENT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  const err: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  createInterface({ input: child.stdout }).on('line', (l) => out.push(l));
  createInterface({ input: child.stderr }).on('line', (l) => err.push(l));
  const line = async (pattern: RegExp, timeoutMs = 15_000): Promise<string> => {
    for (let waited = 0; waited < timeoutMs; waited += 25) {
      const found = [...out, ...err].find((l) => pattern.test(l));
      if (found !== undefined) return found;
      if (child.exitCode !== null) break;
      await sleep(25);
    }
    throw new Error(`no line matching ${pattern}:\n${out.join('\n')}\n${err.join('\n')}`);
  };
  return { out, err, exited, line, signal: (s) => child.exitCode === null && child.kill(s) };
}

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  for (let waited = 0; !check(); waited += 25) {
    if (waited > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

void test('a bad config file: every problem with its JSON path, exit 78 (systemd does not restart)', { timeout: 30_000 }, async (t) => {
  const dir = scratch(t);
  const file = join(dir, 'config.json');
  const broken = thermostatConfig('/dev/null');
  (broken.framing as { telemetry: { match: string }[] }).telemetry[0]!.match = '(?<celsius>[';
  writeFileSync(file, JSON.stringify({ node_type: 'toaster', devices: [broken, { adapter: 'serial', id: 'x y', name: 'n', type: 't', path: '/dev/ttyUSB0', framing: 'json-lines', actions: [] }] }));
  const r = await runTool(process.execPath, [AGENT, 'run', '--config', file], { env: boardEnv() });
  assert.equal(r.code, 78, r.stderr);
  assert.match(r.stderr, /config\.json is invalid:/);
  assert.match(r.stderr, /- \/node_type: /);
  assert.match(r.stderr, /- \/devices\/0\/framing\/telemetry\/0\/match: not a valid regular expression/);
  assert.match(r.stderr, /- \/devices\/1\/id: /);
  const missing = await runTool(process.execPath, [AGENT, '--config', join(dir, 'nope.json')], { env: boardEnv() });
  assert.equal(missing.code, 78);
  assert.match(missing.stderr, /nope\.json: no such file/);
  const notJson = join(dir, 'bad.json');
  writeFileSync(notJson, '{"devices": [');
  const bad = await runTool(process.execPath, [AGENT], { env: boardEnv({ SVC_NODE_CONFIG: notJson }) });
  assert.equal(bad.code, 78);
  assert.match(bad.stderr, /- \/: not valid JSON/);
});

void test('run with a serial thermostat: register, READY and watchdog, telemetry, set and read back, unplug and replug, brain restart, revoked key exits 77', { timeout: 120_000 }, async (t) => {
  const dir = scratch(t);
  const key = newDeviceKey();
  const keyDir = join(dir, 'keys');
  await writeNodeKey(keyDir, 'rpi-hall', key);
  const brain = await startHupBrain({ key, heartbeatMs: 500 });
  t.after(() => brain.stop());
  const tty = join(dir, 'ttyThermo');
  const device = await plugSerialDevice({ kind: 'thermostat', path: tty, tickMs: 100, temp: 20, stateFile: join(dir, 'state.json') });
  t.after(() => device.stop());
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ node_id: 'rpi-hall', name: 'Hall Pi', node_type: 'rpi', devices: [thermostatConfig(tty)] }));
  const notify = await listenNotify(dir);
  t.after(() => notify.close());

  const agent = startAgent(['run', '--config', config, '--brain', brain.url, '--key-dir', keyDir], boardEnv({ NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: '1000000' }));
  t.after(() => agent.signal('SIGKILL'));

  const register = await brain.waitFor('node_register');
  assert.equal(register.payload.node_id, 'rpi-hall');
  assert.equal(register.payload.name, 'Hall Pi');
  assert.deepEqual(register.payload.capabilities, ['active_actuator', 'temperature']);
  const manifests = register.payload.device_manifest as { device_id: string; transport: { kind: string }; actions: { name: string }[] }[];
  assert.deepEqual(manifests.map((m) => [m.device_id, m.transport.kind, m.actions.map((a) => a.name)]), [['thermostat', 'serial', ['set_target', 'read_state']]]);
  assert.equal(typeof register.payload.agent_version, 'string');
  const ready = await notify.waitFor('READY=1', 15_000);
  assert.ok(ready.some((l) => /^STATUS=connected to ws:\/\/127\.0\.0\.1:\d+\/v1\/node; 1 device/.test(l)), ready.join('|'));
  await notify.waitFor('WATCHDOG=1', 15_000);

  const reading = await brain.waitFor('device_event', (f) => f.payload.event_type === 'temperature');
  assert.equal(reading.payload.device_id, 'thermostat');
  assert.equal(typeof (reading.payload.data as { celsius: unknown }).celsius, 'number');
  const set = await brain.request('set_target', { celsius: 23.5 }, { device_id: 'thermostat', timeout_ms: 5000 });
  assert.deepEqual([set.success, set.result, set.error], [true, { celsius: 23.5 }, null]);
  const read = await brain.request('read_state', {}, { timeout_ms: 5000 });
  assert.equal((read.result as { target: number }).target, 23.5);

  const connectedEvents = (): number => brain.frames.filter((f) => f.payload.event_type === 'device_status' && (f.payload.data as { device_state: string }).device_state === 'connected').length;
  const connectedBefore = connectedEvents();
  await device.unplug();
  await brain.waitFor('device_event', (f) => f.payload.event_type === 'device_status' && (f.payload.data as { device_state: string }).device_state === 'connecting');
  const offline = await brain.request('read_state', {}, { timeout_ms: 5000 });
  assert.equal(offline.success, false);
  assert.match(String(offline.error), /^device unavailable/);
  assert.ok((offline.duration_ms as number) < 1000, 'fails fast');
  await device.replug();
  await until(() => connectedEvents() > connectedBefore, 'the device connected again', 20_000);
  const after = await brain.request('read_state', {}, { timeout_ms: 5000 });
  assert.equal((after.result as { target: number } | undefined)?.target, 23.5, JSON.stringify(after));

  await brain.stop();
  await sleep(300);
  await brain.restart();
  await until(() => brain.frames.filter((f) => f.type === 'node_register').length >= 2, 'a register after the brain restart');
  const again = await brain.request('read_state', {}, { timeout_ms: 5000 });
  assert.equal(again.success, true, JSON.stringify(again));

  brain.revoke();
  assert.equal(await agent.exited, 77, agent.err.join('\n'));
  assert.match(agent.err.join('\n'), /refused this node's key .*pair this board again with `node-agent pair`/);
});

void test('SVC_NODE_KEY instead of a key file (the brain-local agent); SIGTERM: node_bye, exit 0', { timeout: 60_000 }, async (t) => {
  const dir = scratch(t);
  const key = newDeviceKey();
  const keyDir = join(dir, 'keys');
  const brain = await startHupBrain({ key });
  t.after(() => brain.stop());
  const agent = startAgent(['--brain', brain.url, '--node-id', 'rpi-quiet', '--key-dir', keyDir], boardEnv({ SVC_NODE_CONFIG: '', HOME: dir, SVC_NODE_KEY: key }));
  t.after(() => agent.signal('SIGKILL'));
  await brain.waitFor('node_register');
  await agent.line(/linked to ws:/);
  agent.signal('SIGTERM');
  assert.equal(await agent.exited, 0, agent.err.join('\n'));
  assert.ok(brain.frames.some((f) => f.type === 'node_bye'));
  assert.match(agent.err.join('\n'), /no config file at .*; running with no devices/);
  assert.doesNotMatch(agent.err.join('\n'), /pairing first/);
});

void test('no key yet: run pairs by code with the built brain first (code on stdout and in STATUS, watchdog pinged meanwhile, claimed with svc pair code), keeps the key, then links', { timeout: 90_000 }, async (t) => {
  const dir = scratch(t);
  const brain = await startBrain();
  t.after(() => brain.stop());
  const keyDir = join(dir, 'keys');
  const notify = await listenNotify(dir);
  t.after(() => notify.close());
  const agent = startAgent(['run', '--brain', brain.url, '--node-id', 'rpi-new', '--key-dir', keyDir], boardEnv({ SVC_NODE_CONFIG: '', HOME: dir, NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: '1000000' }));
  t.after(() => agent.signal('SIGKILL'));
  const claimLine = await agent.line(/^Claim it on the brain: svc pair code \d{6}$/, 30_000);
  await notify.waitFor(`STATUS=not paired yet: claim the code on the brain with \`svc pair code ${/(\d{6})$/.exec(claimLine)![1]!}\``);
  await notify.waitFor('WATCHDOG=1');
  assert.ok(!notify.datagrams().flat().includes('READY=1'), 'not ready before the first node_ack');
  assert.match(agent.err.join('\n'), /has no node key in .* yet; pairing first/);
  const code = /(\d{6})$/.exec(claimLine)![1]!;
  const claim = await runTool(process.execPath, [SVC, 'pair', 'code', code, '--url', brain.url, '--home', brain.home], { env: boardEnv() });
  assert.equal(claim.code, 0, claim.stderr);
  await agent.line(/^Paired as dev_\S+; node key saved to .*rpi-new\.key$/, 30_000);
  await agent.line(/linking node "rpi-new" to the brain at/, 30_000);
  agent.signal('SIGTERM');
  assert.equal(await agent.exited, 0, agent.err.join('\n'));
});

void test('the systemd unit: no restart on the exits that restarting cannot fix (77 refused key, 78 bad config); key and config where the sandbox lets the agent reach them', () => {
  const unit = readFileSync(join(ROOT, 'systemd', 'svc-node-agent.service'), 'utf8');
  const value = (key: string): string[] => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]!.trim());
  assert.deepEqual(value('RestartPreventExitStatus').join(' ').split(/\s+/).map(Number).sort(), [EX_NOPERM, EX_CONFIG]);
  assert.deepEqual(value('Type'), ['notify']);
  assert.deepEqual(value('TimeoutStartSec'), ['infinity'], 'start-up waits for the first node_ack (and maybe a pairing claim)');
  const env = value('Environment');
  const state = value('StateDirectory')[0]!;
  const conf = value('ConfigurationDirectory')[0]!;
  assert.ok(env.some((e) => e.startsWith(`SVC_NODE_KEY_DIR=/var/lib/${state}/`)), 'keys in the writable state directory');
  assert.ok(env.includes(`SVC_NODE_CONFIG=/etc/${conf}/config.json`));
});
