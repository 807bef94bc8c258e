// A simulated serial device on a pty: `socat pty,raw,echo=0,link=<path> EXEC:<device program>` puts a
// real pty at <path> whose other end is test/fixtures/serial-device.mjs (a thermostat speaking a line
// protocol, or a plug speaking JSON lines). unplug() kills socat — the pty closes, as when a USB
// adapter is pulled, and <path> disappears; replug() starts a new socat at the same path.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot } from './external-tools';

export interface SimulatedDevice {
  readonly path: string;
  unplug(): Promise<void>;
  replug(): Promise<void>;
  /** Unplugs if plugged; for t.after. */
  stop(): Promise<void>;
}

export interface DeviceOptions {
  kind: 'thermostat' | 'plug';
  /** The pty's link path (in the test's scratch directory). */
  path: string;
  tickMs?: number;
  temp?: number;
  /** Keeps the device's target/power across unplugs. */
  stateFile?: string;
}

const PROGRAM = join(repoRoot(), 'test', 'fixtures', 'serial-device.mjs');

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

export async function plugSerialDevice(options: DeviceOptions): Promise<SimulatedDevice> {
  if (/[\s,:!"'\\]/.test(options.path + PROGRAM + (options.stateFile ?? ''))) throw new Error('socat addresses cannot carry spaces or separators');
  const command = [process.execPath, PROGRAM, '--kind', options.kind, '--tick-ms', String(options.tickMs ?? 100), ...(options.temp !== undefined ? ['--temp', String(options.temp)] : []), ...(options.stateFile !== undefined ? ['--state', options.stateFile] : [])].join(' ');
  let socat: ChildProcess | null = null;
  let log = '';
  const plug = async (): Promise<void> => {
    const child = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${options.path}`, `EXEC:${command}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
    socat = child;
    await until(() => existsSync(options.path) || child.exitCode !== null, `socat to create ${options.path}`);
    if (child.exitCode !== null) throw new Error(`socat exited (${child.exitCode}):\n${log}`);
  };
  const unplug = async (): Promise<void> => {
    const child = socat;
    socat = null;
    if (child === null || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
    await until(() => !existsSync(options.path), `socat to remove ${options.path}`);
  };
  await plug();
  return { path: options.path, unplug, replug: plug, stop: unplug };
}

/** The config entry (node-agent config.ts) of the simulated thermostat at `path`. */
export function thermostatConfig(path: string, id = 'thermostat'): Record<string, unknown> {
  const err = '^ERR (?<message>.*)$';
  return {
    adapter: 'serial',
    id,
    name: 'Hall thermostat',
    type: 'thermostat',
    path,
    baud: 115200,
    capabilities: ['temperature', 'active_actuator'],
    reply_timeout_ms: 2000,
    framing: {
      commands: {
        set_target: { send: 'SET {celsius}', reply: '^OK (?<celsius>-?\\d+(\\.\\d+)?)$', error: err },
        read_state: { send: 'GET', reply: '^TEMP (?<celsius>\\S+) TARGET (?<target>\\S+)$', error: err },
      },
      telemetry: [{ match: '^TEMP (?<celsius>-?\\d+(\\.\\d+)?)$', event: 'temperature', types: { celsius: 'number' } }],
    },
    actions: [
      {
        name: 'set_target',
        category: 'actuator',
        permission_tier: 'active',
        description: 'Set the target temperature',
        params: [{ name: 'celsius', type: 'number', required: true, minimum: 5, maximum: 35 }],
        verify: { via: 'read_state', field: 'target', expect: '$celsius', delay_ms: 200, retries: 1 },
      },
      { name: 'read_state', category: 'sensor', description: 'Read the temperature and the target' },
    ],
  };
}

/** The config entry of the simulated JSON-lines plug at `path`. */
export function plugConfig(path: string, id = 'plug'): Record<string, unknown> {
  return {
    adapter: 'serial',
    id,
    name: 'Desk plug',
    type: 'switch',
    path,
    framing: 'json-lines',
    capabilities: ['relay'],
    actions: [
      { name: 'set_power', category: 'actuator', permission_tier: 'privileged', params: [{ name: 'on', type: 'boolean', required: true }] },
      { name: 'get_state', category: 'sensor' },
    ],
  };
}
