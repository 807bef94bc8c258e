// How svc launches the brain process. Measured on the bundled brain (docs/storage.md, bench):
// V8's default worker pool (one thread per core) plus glibc's per-thread malloc arenas cost ~20 MB
// of idle RSS on a daemon that does its work on one thread; these flags take idle RSS from ~100 MB
// to ~76-85 MB. systemd/svc-brain.service passes the same flags and environment.
export const BRAIN_NODE_FLAGS: readonly string[] = ['--v8-pool-size=1', '--max-semi-space-size=1'];
export const BRAIN_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '1' };
