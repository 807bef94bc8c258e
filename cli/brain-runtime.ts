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
