// A stand-in for systemd's notification socket (sd_notify(3)): socat bound to an AF_UNIX datagram
// socket records every datagram a service sends to $NOTIFY_SOCKET. socat -v prints each datagram
// to stderr behind a header that carries its length, which keeps datagrams apart.
// socat keeps the barrier fd systemd-notify passes along with BARRIER=1 (systemd closes it at once),
// so each systemd-notify child waits out its 5 s barrier timeout; the datagrams arrive regardless.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface NotifySocket {
  /** Value for $NOTIFY_SOCKET. */
  readonly path: string;
  /** Every datagram so far, each split into its KEY=VALUE lines. */
  datagrams(): string[][];
  /** Resolves with the first datagram that has this line (e.g. READY=1); rejects after timeoutMs. */
  waitFor(line: string, timeoutMs?: number): Promise<string[]>;
  close(): Promise<void>;
}

const HEADER = /^> \S+ \S+\s+length=(\d+) from=\d+ to=\d+\n/;

function parse(raw: Buffer): string[][] {
  const out: string[][] = [];
  let rest = raw;
  for (let i = 0; i < 100_000 && rest.length > 0; i++) {
    const text = rest.toString('latin1');
    const start = text.indexOf('> ');
    if (start < 0) break;
    const m = HEADER.exec(text.slice(start));
    if (!m) break;
    const begin = start + m[0].length;
    const length = Number(m[1]);
    if (rest.length < begin + length) break;
    out.push(rest.subarray(begin, begin + length).toString('utf8').split('\n').filter(Boolean));
    rest = rest.subarray(begin + length);
  }
  return out;
}

async function waitForFile(path: string, child: ChildProcess, stderr: () => string): Promise<void> {
  for (let i = 0; i < 200 && !existsSync(path); i++) {
    if (child.exitCode !== null) throw new Error(`socat exited with ${child.exitCode}: ${stderr()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  if (!existsSync(path)) throw new Error(`socat did not create ${path}: ${stderr()}`);
}

/** Binds a fresh datagram socket in dir (which must exist) and records what arrives. */
export async function listenNotify(dir: string): Promise<NotifySocket> {
  const path = join(dir, 'notify.sock');
  const child = spawn('socat', ['-v', '-u', `UNIX-RECV:${path}`, '/dev/null'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let raw = Buffer.alloc(0);
  const listeners = new Set<() => void>();
  child.stderr.on('data', (d: Buffer) => {
    raw = Buffer.concat([raw, d]);
    for (const l of listeners) l();
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await waitForFile(path, child, () => raw.toString());
  const datagrams = (): string[][] => parse(raw);
  return {
    path,
    datagrams,
    waitFor: (line, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const found = datagrams().find((d) => d.includes(line));
          if (!found) return;
          cleanup();
          resolve(found);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no datagram with ${line} within ${timeoutMs} ms; got ${JSON.stringify(datagrams())}`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      }),
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
