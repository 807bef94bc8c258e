// run_command (issue 11): runs one program for the agent, privileged, so with the default policy it
// waits for approval (docs/approvals.md). No shell: argv is executed as given (a shell flag would add
// nothing, since argv may name /bin/sh itself, and the approval then shows exactly that). The working
// folder must be given and resolve (realpath, through the path guard) inside a folder granted for
// writing, so a symlinked cwd pointing outside is refused. The child starts from a minimal environment
// (never the brain's), minus any variable whose value holds a vault secret; it runs in its own process
// group, which is killed on timeout, on abort, and when the command exits (no leftovers). Output is
// capped; the result carries exit code, signal and `revertible: false` (docs/files.md).
import { spawn } from 'node:child_process';
import { userInfo } from 'node:os';
import { Type } from '@sinclair/typebox';
import type { SecretStore } from '../kernel/capability';
import { defineTool, ToolFailure, type Tool } from '../kernel/tool';
import type { ActiveGrant } from './grants';
import { resolveGranted } from './path-guard';
import type { Checkpoints } from './checkpoints';

export const RUN_LIMITS = {
  defaultTimeoutMs: 30_000,
  maxTimeoutMs: 10 * 60_000,
  /** stdout and stderr together; the rest is read and dropped, and the result says it was cut. */
  outputBytes: 64 * 1024,
  /** After the group is killed, how long the pipes may stay open (a process that left the group). */
  drainMs: 1_000,
} as const;

export interface RunCommandDeps {
  grants(): readonly ActiveGrant[];
  /** Every secret the child must not see in its environment (the vault's values). */
  secrets(): Iterable<string>;
  /** Records each command run, as not revertible (checkpoints.ts); none in some tests. */
  checkpoints?: Checkpoints;
}

export interface CommandResult {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  stdout: string;
  stderr: string;
  /** True when stdout + stderr passed RUN_LIMITS.outputBytes and the rest was dropped. */
  truncated: boolean;
  output_bytes: number;
  revertible: false;
}

const BASE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The child's environment: PATH, HOME, LANG only, and none whose value contains a secret. */
export function commandEnv(secrets: Iterable<string>): Record<string, string> {
  const env: Record<string, string> = { PATH: BASE_PATH, HOME: userInfo().homedir, LANG: 'C.UTF-8' };
  const list = [...secrets].filter((s) => s.length > 0);
  for (const [name, value] of Object.entries(env)) if (list.some((s) => value.includes(s))) delete env[name];
  return env;
}

export function runCommandTool(deps: RunCommandDeps): Tool {
  return defineTool({
    spec: {
      name: 'run_command',
      description: `Runs a program (argv, no shell) in a folder granted for writing. Timeout ${RUN_LIMITS.defaultTimeoutMs / 1000} s by default, output capped at ${RUN_LIMITS.outputBytes / 1024} KiB. Not revertible.`,
      parameters: Type.Object({
        argv: Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { minItems: 1, maxItems: 256, description: 'Program and its arguments; argv[0] is looked up on a standard PATH' }),
        cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'Absolute working folder inside a folder granted for writing (required)' })),
        timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: RUN_LIMITS.maxTimeoutMs })),
        shell: Type.Optional(Type.Literal(false, { description: 'Never a shell; name /bin/sh in argv to use one' })),
      }),
    },
    safety: 'privileged',
    run: async ({ argv, cwd, timeout_ms }, ctx) => {
      const grants = deps.grants();
      if (cwd === undefined) throw new ToolFailure(`run_command needs a cwd inside a folder granted for writing (${grants.filter((g) => g.mode === 'write').map((g) => g.path).join(', ') || 'none granted; grant one with `svc grant add <folder> --write`'})`);
      if (argv.some((a) => a.includes('\0'))) throw new ToolFailure('run_command: an argument contains a NUL character');
      const r = resolveGranted(cwd, grants, 'write');
      if (!r.ok) throw new ToolFailure(r.reason);
      if (r.path.kind !== 'directory') throw new ToolFailure(`${cwd}: a file, not a folder`);
      const pending = await deps.checkpoints?.command(ctx, argv, r.path.real);
      let result: CommandResult;
      try {
        result = await runProcess(argv, r.path.real, commandEnv(deps.secrets()), timeout_ms ?? RUN_LIMITS.defaultTimeoutMs, ctx.signal);
      } catch (err) {
        // Not started (no such program): nothing ran, nothing to list.
        if (err instanceof ToolFailure) await pending?.abandon();
        else await pending?.done(null);
        throw err;
      }
      await pending?.done(null);
      const how = result.timed_out ? `timed out and was killed` : result.signal ? `killed by ${result.signal}` : `exited with ${result.exit_code}`;
      return { summary: `${argv[0]} ${how}${result.truncated ? ` (output cut at ${RUN_LIMITS.outputBytes / 1024} KiB)` : ''}`, data: { argv, cwd: r.path.real, ...result } };
    },
  });
}

/** Spawns argv in its own process group and collects capped output until its pipes close. */
export function runProcess(argv: readonly string[], cwd: string, env: Record<string, string>, timeoutMs: number, signal: AbortSignal): Promise<CommandResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let kept = 0;
    let seen = 0;
    let timedOut = false;
    let exit: { code: number | null; signal: string | null } | null = null;
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      seen += chunk.length;
      const room = RUN_LIMITS.outputBytes - kept;
      if (room <= 0) return;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      into.push(part);
      kept += part.length;
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const onAbort = (): void => killGroup();
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) killGroup();
    let drain: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(drain);
      signal.removeEventListener('abort', onAbort);
      const text = (bufs: Buffer[]): string => Buffer.concat(bufs).toString('utf8');
      resolvePromise({ exit_code: exit?.code ?? null, signal: exit?.signal ?? null, timed_out: timedOut, stdout: text(out), stderr: text(err), truncated: seen > kept, output_bytes: seen, revertible: false });
    };
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (e.code === 'ENOENT' || e.code === 'EACCES') reject(new ToolFailure(`${argv[0]}: cannot be run (${e.code})`));
      else reject(e);
    });
    child.on('exit', (code, sig) => {
      exit = { code, signal: sig };
      // Whatever the command left running in its group goes with it; pipes held by a process that
      // left the group are given up after a short drain.
      killGroup();
      drain = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish();
      }, RUN_LIMITS.drainMs);
    });
    child.on('close', () => finish());
  });
}

/** Every value of every namespace of the vault (none while it is locked: nothing is readable then). */
export function* vaultValues(vault: SecretStore): Generator<string> {
  if (vault.status().state !== 'ok') return;
  for (const ns of vault.namespaces()) {
    for (const key of vault.keys(ns)) {
      const value = vault.get(ns, key);
      if (value !== undefined) yield value;
    }
  }
}
