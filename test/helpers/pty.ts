// Runs a command under a real pseudo-terminal (util-linux `script`), so TTY-only behaviour (the REPL,
// the setup wizard) is exercised as a person would: write keystrokes, wait for screen text.
import { spawn } from 'node:child_process';

export const stripAnsi = (s: string): string => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

export interface PtySession {
  write(keys: string): void;
  /** Resolves once the (ANSI-stripped) output so far matches; rejects with the screen after timeoutMs (a bound, not a wait). */
  until(re: RegExp, timeoutMs?: number): Promise<void>;
  output(): string;
  exited: Promise<number | null>;
  kill(): void;
}

export function runInPty(command: string, env: NodeJS.ProcessEnv, cwd?: string): PtySession {
  // script(1)'s pty starts 0x0; prompt libraries wrap at the width, so give it a real terminal size.
  const child = spawn('script', ['-qfec', `stty cols 120 rows 40; exec ${command}`, '/dev/null'], { env: { ...env, TERM: 'xterm' }, stdio: ['pipe', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });
  let out = '';
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  let exitCode: number | null | undefined;
  const failures: (() => void)[] = [];
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
    for (const w of [...waiters]) {
      if (!w.re.test(stripAnsi(out))) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  return {
    write: (keys) => child.stdin.write(keys),
    until: (re, timeoutMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        if (re.test(stripAnsi(out))) return resolve();
        const timer = setTimeout(() => reject(new Error(`no ${String(re)} on the screen within ${timeoutMs} ms${exitCode !== undefined ? ` (exited ${exitCode})` : ''}:\n${stripAnsi(out)}`)), timeoutMs);
        const fail = (): void => {
          clearTimeout(timer);
          reject(new Error(`no ${String(re)} on the screen (exited ${exitCode}):\n${stripAnsi(out)}`));
        };
        if (exitCode !== undefined) return fail();
        failures.push(fail);
        waiters.push({ re, resolve: () => (clearTimeout(timer), failures.splice(failures.indexOf(fail), 1), resolve()) });
      }),
    output: () => stripAnsi(out),
    exited: new Promise<number | null>((resolve) =>
      child.on('close', (code) => {
        exitCode = code;
        resolve(code);
        for (const fail of failures.splice(0)) fail();
      }),
    ),
    kill: () => child.kill('SIGKILL'),
  };
}
