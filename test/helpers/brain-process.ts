// Starts the built brain (dist/svc.mjs serve) as a real child process on an ephemeral port with a
// fresh $SVC_HOME, for black-box e2e tests. The port is read from the brain's own "listening" log line.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BRAIN_ENV, BRAIN_NODE_FLAGS } from '../../cli/brain-runtime';

export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const SVC = join(ROOT, 'dist', 'svc.mjs');

export interface BrainProcess {
  url: string;
  port: number;
  home: string;
  token: string;
  child: ChildProcess;
  /** Every stdout line so far (pino JSON). */
  lines: string[];
  /** Authenticated fetch against the brain. */
  api(path: string, init?: RequestInit): Promise<Response>;
  /** SIGTERM and wait; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
  exited: Promise<number | null>;
}

export interface StartOptions {
  home?: string;
  env?: Record<string, string>;
  args?: string[];
  /** Keep $SVC_HOME after stop (for restart tests). Default: removed when the home was created here. */
  keepHome?: boolean;
  timeoutMs?: number;
}

export function tempHome(prefix = 'svc-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startBrain(opts: StartOptions = {}): Promise<BrainProcess> {
  const ownHome = opts.home === undefined;
  const home = opts.home ?? tempHome();
  // Launched as `svc start` and the systemd unit launch it (cli/brain-runtime.ts), so `svc serve` does
  // not re-execute itself and child.pid is the brain's own pid.
  const child = spawn(process.execPath, [...BRAIN_NODE_FLAGS, SVC, 'serve', '--port', '0', ...(opts.args ?? [])], {
    env: { ...process.env, ...BRAIN_ENV, SVC_HOME: home, SVC_LOG_LEVEL: 'info', SVC_API_TOKEN: '', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`brain did not start within ${opts.timeoutMs ?? 15000} ms\n${stderr}\n${lines.join('\n')}`)), opts.timeoutMs ?? 15000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const m = /"msg":"svc brain listening on http:\/\/[^"]*:(\d+)"/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`brain exited with ${code} before listening\n${stderr}\n${lines.join('\n')}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const token = opts.env?.SVC_API_TOKEN || readFileSync(join(home, 'api-token'), 'utf8').trim();
  const cleanup = (): void => {
    if (ownHome && !opts.keepHome) rmSync(home, { recursive: true, force: true });
  };
  return {
    url,
    port,
    home,
    token,
    child,
    lines,
    exited,
    api: (path, init = {}) =>
      fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.body ? { 'content-type': 'application/json' } : {}), ...(init.headers as Record<string, string> | undefined) } }),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const code = await exited;
      cleanup();
      return code;
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      cleanup();
    },
  };
}
