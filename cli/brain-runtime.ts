// How svc launches the brain process. Measured on the bundled brain (bench/sections/startup.mjs):
// - V8's default worker pool (one thread per core) plus glibc's per-thread malloc arenas cost ~20 MB
//   of idle RSS on a daemon that does its work on one thread: one worker, one arena, 1 MB semi-space.
// - V8 compiles SQLite's hot wasm functions with TurboFan in 32 KiB zone segments; freed, they stay
//   resident as holes in glibc's heap (~19 MiB). Allocations from 32 KiB up are mmap'd instead, and
//   freed memory above 32 KiB at the heap top is returned: idle RSS 92 -> 72 MiB, /health and store
//   throughput unchanged (bench/sections/http.mjs, store.mjs).
// systemd/svc-brain.service passes the same flags and environment (a test keeps them in step).
export const BRAIN_NODE_FLAGS: readonly string[] = ['--v8-pool-size=1', '--max-semi-space-size=1'];
export const BRAIN_ENV: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '1',
  MALLOC_MMAP_THRESHOLD_: '32768',
  MALLOC_TRIM_THRESHOLD_: '32768',
  MALLOC_TOP_PAD_: '0',
};

/** Set in the environment of a brain that `svc serve` re-executed, so it never re-executes again. */
export const RUNTIME_MARKER = 'SVC_BRAIN_RUNTIME';

const flagName = (flag: string): string => flag.split('=')[0]!;

/**
 * What `svc serve` lacks of the runtime above: flags not on node's command line (or NODE_OPTIONS) and
 * variables not in the environment. A flag or variable the caller set to another value counts as set
 * (their choice stands). glibc reads MALLOC_* when the process starts, so they cannot be set later.
 */
export function missingRuntime(execArgv: readonly string[], env: Readonly<Record<string, string | undefined>>): { flags: string[]; env: Record<string, string> } {
  const given = new Set([...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)].filter(Boolean).map(flagName));
  return {
    flags: BRAIN_NODE_FLAGS.filter((f) => !given.has(flagName(f))),
    env: Object.fromEntries(Object.entries(BRAIN_ENV).filter(([k]) => env[k] === undefined)),
  };
}

export interface Reexec {
  args: string[];
  env: Record<string, string | undefined>;
}

/**
 * How `svc serve` restarts itself with the brain's runtime, or null when it runs with it already (svc
 * start and the systemd unit pass it) or was itself re-executed. `argv` is process.argv.
 */
export function reexecPlan(execArgv: readonly string[], argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Reexec | null {
  if (env[RUNTIME_MARKER] !== undefined) return null;
  const missing = missingRuntime(execArgv, env);
  if (missing.flags.length === 0 && Object.keys(missing.env).length === 0) return null;
  return { args: [...missing.flags, ...execArgv, ...argv.slice(1)], env: { ...env, ...missing.env, [RUNTIME_MARKER]: '1' } };
}
