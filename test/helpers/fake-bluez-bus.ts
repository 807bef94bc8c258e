// A private D-Bus for BLE tests: dbus-daemon with the session policy (any peer may own any name, so
// the fake BlueZ can take org.bluez) on a socket in a scratch directory. The node-agent's BLE
// adapter is pointed at it as if it were the system bus.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface PrivateBus {
  /** A D-Bus address (`unix:path=...`) for DBUS_SYSTEM_BUS_ADDRESS or an explicit bus address. */
  readonly address: string;
  /** Stops the daemon; every connection to it ends. Idempotent. */
  close(): Promise<void>;
}

/** Why BLE tests cannot run here, or null when dbus-daemon is installed. */
export function privateBusMissing(): string | null {
  const r = spawnSync('dbus-daemon', ['--version'], { stdio: 'ignore' });
  return r.error || r.status !== 0 ? 'dbus-daemon is not installed (Debian package dbus-daemon)' : null;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

/** Starts dbus-daemon listening on `<dir>/bus.sock` and resolves once it prints its address. */
export async function startPrivateBus(dir: string): Promise<PrivateBus> {
  const child = spawn('dbus-daemon', ['--session', '--nofork', '--nopidfile', '--print-address=1', `--address=unix:path=${join(dir, 'bus.sock')}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const address = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer): void => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        child.stdout.off('data', onData);
        resolve(line.trim());
      }
    };
    child.stdout.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`dbus-daemon exited with ${code}: ${stderr}`)));
  });
  const gone = exited(child);
  return {
    address,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await gone;
    },
  };
}
