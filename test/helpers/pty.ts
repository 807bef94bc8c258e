// Runs a command under a real pseudo-terminal (util-linux `script`), so TTY-only behaviour (the REPL,
// the setup wizard) is exercised as a person would: write keystrokes, wait for screen text.
import { spawn } from 'node:child_process';

export const stripAnsi = (s: string): string => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

export interface PtySession {
  write(keys: string): void;
  /** Resolves once the (ANSI-stripped) output so far matches. */
  until(re: RegExp): Promise<void>;
  output(): string;
  exited: Promise<number | null>;
  kill(): void;
}

export function runInPty(command: string, env: NodeJS.ProcessEnv): PtySession {
  // script(1)'s pty starts 0x0; prompt libraries wrap at the width, so give it a real terminal size.
  const child = spawn('script', ['-qfec', `stty cols 120 rows 40; exec ${command}`, '/dev/null'], { env: { ...env, TERM: 'xterm' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  const waiters: { re: RegExp; resolve: () => void }[] = [];
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
    until: (re) => new Promise<void>((resolve) => (re.test(stripAnsi(out)) ? resolve() : waiters.push({ re, resolve }))),
    output: () => stripAnsi(out),
    exited: new Promise<number | null>((resolve) => child.on('exit', resolve)),
    kill: () => child.kill('SIGKILL'),
  };
}
