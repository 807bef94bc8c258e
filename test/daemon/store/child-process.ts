// Cross-process store tests need a second process running the same (bundled) code. The compiled test
// file re-runs itself with SVC_TEST_CHILD_ROLE set: it then acts out that role instead of registering
// tests. The child reports with one JSON line per event on stdout and waits for "go"/"release" lines on
// stdin, so every step the parent observes is acknowledged rather than slept for.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';

export const CHILD_ROLE = process.env.SVC_TEST_CHILD_ROLE;
export const CHILD_ARGS: readonly string[] = process.argv.slice(2);

export interface Child {
  proc: ChildProcessWithoutNullStreams;
  pid: number;
  /** The next JSON line the child prints. */
  next<T = Record<string, unknown>>(): Promise<T>;
  send(line: string): void;
  kill(signal?: NodeJS.Signals): Promise<void>;
  exited: Promise<number | null>;
}

export function spawnSelf(file: string, role: string, args: string[] = []): Child {
  const env: NodeJS.ProcessEnv = { ...process.env, SVC_TEST_CHILD_ROLE: role };
  delete env.NODE_TEST_CONTEXT; // the child is a plain script, not a test-runner subprocess
  const proc = spawn(process.execPath, [file, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  // 'exit' can come before the last lines of stdout are read; 'close' comes after the streams ended,
  // so a child that reports and exits at once is heard before it counts as gone.
  const closed = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
  const queue: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  const lines: Interface = createInterface({ input: proc.stdout });
  lines.on('line', (line) => {
    const waiter = waiters.shift();
    if (waiter) waiter(line);
    else queue.push(line);
  });
  return {
    proc,
    pid: proc.pid!,
    exited,
    next: <T>() =>
      new Promise<T>((resolve, reject) => {
        const take = (line: string): void => resolve(JSON.parse(line) as T);
        const queued = queue.shift();
        if (queued !== undefined) return take(queued);
        waiters.push(take);
        // A line that arrived resolved this promise already; then this rejection changes nothing.
        void closed.then((code) => reject(new Error(`child ${role} exited (${code}) before reporting\n${stderr}`)));
      }),
    send: (line) => proc.stdin.write(`${line}\n`),
    kill: async (signal = 'SIGKILL') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await exited;
    },
  };
}

/** In the child: resolves with each line the parent sends. */
export function parentLines(): AsyncIterableIterator<string> {
  return createInterface({ input: process.stdin })[Symbol.asyncIterator]();
}

export function report(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}
