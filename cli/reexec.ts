// `svc serve` restarting itself with the brain's runtime flags and malloc environment
// (cli/brain-runtime.ts), for a terminal, a container or a process manager that runs it bare.
// - Node with process.execve (22.15+, 23.11+): the process image is replaced; the pid, stdio, signals
//   and exit status are the brain's own.
// - Older Node: the first process stays as a thin supervisor. The brain runs in a process group of its
//   own, so a terminal's Ctrl-C reaches it once, through the supervisor, not twice (a second signal
//   makes the brain exit at once). The supervisor forwards every signal it gets and exits with the
//   brain's status, or dies of the brain's signal. systemd's unit passes the runtime itself, so no
//   re-exec happens there; a unit that does not would need NotifyAccess=all for the brain's READY=1.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Reexec } from './brain-runtime';

const FORWARDED: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];
/** Signals whose default action in node is to end the process (SIGUSR1 starts the inspector instead). */
const FATAL = new Set<NodeJS.Signals>(['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGKILL', 'SIGABRT', 'SIGSEGV']);

type Execve = (file: string, args: string[], env: Record<string, string>) => never;

export function reexec(execPath: string, plan: Reexec): Promise<void> {
  const env = Object.fromEntries(Object.entries(plan.env).filter((e): e is [string, string] => e[1] !== undefined));
  const execve = (process as { execve?: Execve }).execve;
  if (typeof execve === 'function') execve(execPath, [execPath, ...plan.args], env);
  const child = spawn(execPath, plan.args, { stdio: 'inherit', env, detached: true });
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  for (const s of FORWARDED) process.on(s, forward);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      for (const s of FORWARDED) process.off(s, forward);
      // Like a shell: 128 + the signal number, and die of the same signal where node lets us.
      process.exitCode = signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1);
      if (signal && FATAL.has(signal)) process.kill(process.pid, signal);
      resolve();
    });
  });
}
