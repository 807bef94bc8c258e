// The skill sandbox (issue 16 "Skills"; docs/skills.md): untrusted JavaScript in QuickJS compiled to
// WebAssembly, one fresh runtime and context per run, disposed after. The source is evaluated as a
// script; when it defines a function `main`, `main(params)` is called and its result awaited, otherwise
// the script's last expression is (awaited when it is a promise). `set_result(value)` wins over either.
// Every run ends as a result or as one of four kills: timeout (the wall time, host waits included),
// memory, error (anything thrown) and policy (a host refusal, whatever the skill did with it).
//
// Memory: this QuickJS build has no malloc_usable_size, so its own malloc limit only refuses single
// allocations larger than the limit and counts 8 bytes for every other block. The limit is therefore
// also enforced by sampling the runtime's real usage in the interrupt handler, and the one WebAssembly
// memory of the process is capped (WASM_HEAP_MAX_BYTES) so that no burst between samples can grow it
// past that.
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import releaseSync from '@jitl/quickjs-wasmfile-release-sync';
import { MAX_RESULT_BYTES, captureJson, installHostFunctions, newRunState, toVm, type RunState, type SkillHost, type VmJson } from './host-functions';

export const DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024;
export const DEFAULT_WALL_MS = 5000;
/** The cap of the one WebAssembly memory all runs of the process share. */
export const WASM_HEAP_MAX_BYTES = 512 * 1024 * 1024;
const WASM_PAGE = 64 * 1024;
/** The interpreter stack; 512 KiB already overruns the build's C stack (the runtime then aborts on dispose). */
const STACK_BYTES = 256 * 1024;
/** How often the interrupt handler measures the runtime's memory. */
const MEMORY_SAMPLE_MS = 10;
const MAX_MESSAGE = 1000;

export const KILL_REASONS = ['timeout', 'memory', 'error', 'policy'] as const;
export type KillReason = (typeof KILL_REASONS)[number];
export type SkillOutcome = { ok: true; result: unknown; logs: string[] } | { ok: false; kill: KillReason; message: string; logs: string[] };
export interface SkillLimits {
  memoryBytes?: number;
  wallMs?: number;
}
export interface SkillRun {
  source: string;
  params: Record<string, unknown>;
  limits?: SkillLimits;
  host: SkillHost;
}

let quickjs: Promise<QuickJSWASMModule> | undefined;
/** Node's WebAssembly, which the ES2023 lib this project compiles against does not declare. */
const wasm = (globalThis as unknown as { WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => object } }).WebAssembly;

/** The QuickJS module, loaded on the first run and kept for the process. */
function quickjsModule(): Promise<QuickJSWASMModule> {
  quickjs ??= newQuickJSWASMModuleFromVariant(newVariant(releaseSync, { wasmMemory: new wasm.Memory({ initial: 256, maximum: WASM_HEAP_MAX_BYTES / WASM_PAGE }) }));
  return quickjs;
}

interface Guard {
  deadline: number;
  wallMs: number;
  memoryBytes: number;
  memoryExceeded: boolean;
}

export async function runSkill(run: SkillRun): Promise<SkillOutcome> {
  const module = await quickjsModule();
  const wallMs = run.limits?.wallMs ?? DEFAULT_WALL_MS;
  const guard: Guard = { deadline: Date.now() + wallMs, wallMs, memoryBytes: run.limits?.memoryBytes ?? DEFAULT_MEMORY_BYTES, memoryExceeded: false };
  const runtime = module.newRuntime();
  const state = newRunState();
  try {
    runtime.setMemoryLimit(guard.memoryBytes);
    runtime.setMaxStackSize(STACK_BYTES);
    runtime.setInterruptHandler(interruptWhen(runtime, state, guard));
    return await runInContext(runtime, run, state, guard);
  } finally {
    state.closed = true;
    disposeRuntime(runtime);
  }
}

/**
 * Frees a runtime. QuickJS aborts the whole WebAssembly instance when a runtime still holds objects at
 * that point; the next run then loads a fresh module instead of failing on a dead one.
 */
function disposeRuntime(runtime: QuickJSRuntime): void {
  try {
    runtime.dispose();
  } catch (error) {
    quickjs = undefined;
    throw error;
  }
}

async function runInContext(runtime: QuickJSRuntime, run: SkillRun, state: RunState, guard: Guard): Promise<SkillOutcome> {
  const context = runtime.newContext();
  const json = captureJson(context);
  try {
    installHostFunctions(context, json, state, run.params, run.host);
    return await execute(context, json, run, state, guard);
  } finally {
    for (const deferred of state.pending) deferred.dispose();
    state.pending.clear();
    json.dispose();
    context.dispose();
  }
}

/** Interrupts at the deadline, on a policy refusal, and when the sampled memory passes the limit. */
function interruptWhen(runtime: QuickJSRuntime, state: RunState, guard: Guard): () => boolean {
  let nextSample = 0;
  return () => {
    const now = Date.now();
    if (now > guard.deadline || state.policy !== null) return true;
    if (now < nextSample) return false;
    nextSample = now + MEMORY_SAMPLE_MS;
    guard.memoryExceeded ||= memoryUsed(runtime) > guard.memoryBytes;
    return guard.memoryExceeded;
  };
}

/** The runtime's allocated bytes, from its memory report (which allocates nothing inside the VM). */
function memoryUsed(runtime: QuickJSRuntime): number {
  const m = /memory used\s+\d+\s+(\d+)/.exec(runtime.dumpMemoryUsage());
  return m ? Number(m[1]) : 0;
}

async function execute(context: QuickJSContext, json: VmJson, run: SkillRun, state: RunState, guard: Guard): Promise<SkillOutcome> {
  const evaluated = context.evalCode(run.source, 'skill.js', { type: 'global' });
  if (evaluated.error) return failure(context, evaluated.error, state, guard);
  const entry = callMain(context, json, evaluated.value, run.params);
  if (entry.error) return failure(context, entry.error, state, guard);
  const settled = await settle(context, entry.value, state, guard);
  if ('kill' in settled) return { ok: false, kill: settled.kill, message: settled.message, logs: state.logs };
  if (settled.error) return failure(context, settled.error, state, guard);
  return success(context, json, settled.value, state, guard);
}

type Step = { value: QuickJSHandle; error?: undefined } | { error: QuickJSHandle; value?: undefined };

/** `main(params)` when the script defined a function `main`, else the script's completion value. */
function callMain(context: QuickJSContext, json: VmJson, completion: QuickJSHandle, params: Record<string, unknown>): Step {
  const main = context.getProp(context.global, 'main');
  try {
    if (context.typeof(main) !== 'function') return { value: completion };
    completion.dispose();
    const args = context.newObject();
    for (const [k, v] of Object.entries(params)) toVm(context, json, v).consume((h) => context.setProp(args, k, h));
    const called = context.callFunction(main, context.undefined, args);
    args.dispose();
    return called.error ? { error: called.error } : { value: called.value };
  } finally {
    main.dispose();
  }
}

type Settled = Step | { kill: 'timeout' | 'policy' | 'error'; message: string };

/** Runs the VM's jobs until the entry's promise settles, waiting on host calls within the wall time. */
async function settle(context: QuickJSContext, entry: QuickJSHandle, state: RunState, guard: Guard): Promise<Settled> {
  for (;;) {
    const jobs = context.runtime.executePendingJobs();
    if (jobs.error) return (entry.dispose(), { error: jobs.error });
    const stop = hostStop(state);
    if (stop) return (entry.dispose(), stop);
    const promise = context.getPromiseState(entry);
    if (promise.type === 'fulfilled') return promise.notAPromise ? { value: entry } : (entry.dispose(), { value: promise.value });
    if (promise.type === 'rejected') return (entry.dispose(), { error: promise.error });
    if (state.pending.size === 0) return (entry.dispose(), { kill: 'error', message: 'the skill awaits a promise that nothing can settle' });
    if (!(await hostSettledBefore(state, guard.deadline))) return (entry.dispose(), { kill: 'timeout', message: timeoutMessage(guard) });
  }
}

function hostStop(state: RunState): Settled | null {
  if (state.policy !== null) return { kill: 'policy', message: state.policy };
  if (state.hostError !== null) return { kill: 'error', message: state.hostError };
  return null;
}

/** Waits for a host call to settle; false when the deadline came first. */
function hostSettledBefore(state: RunState, deadline: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    state.wake = () => {
      clearTimeout(timer);
      state.wake = () => undefined;
      resolve(true);
    };
  });
}

function success(context: QuickJSContext, json: VmJson, value: QuickJSHandle, state: RunState, guard: Guard): SkillOutcome {
  const stop = hostStop(state);
  if (stop && 'kill' in stop) return (value.dispose(), { ok: false, kill: stop.kill, message: stop.message, logs: state.logs });
  if (guard.memoryExceeded) return (value.dispose(), { ok: false, kill: 'memory', message: memoryMessage(guard, ''), logs: state.logs });
  // A value whose JSON throws (a cycle, a BigInt, a throwing toJSON) ends as an error like any throw.
  const stringified = state.result ? undefined : context.callFunction(json.stringify, context.undefined, value);
  value.dispose();
  if (stringified?.error) return failure(context, stringified.error, state, guard);
  const returned = stringified?.value;
  const text = state.result?.json ?? (returned && context.typeof(returned) === 'string' ? context.getString(returned) : 'null');
  returned?.dispose();
  if (Buffer.byteLength(text) > MAX_RESULT_BYTES) return { ok: false, kill: 'error', message: `the result is larger than ${MAX_RESULT_BYTES} bytes`, logs: state.logs };
  return { ok: true, result: JSON.parse(text) as unknown, logs: state.logs };
}

/** The kill an exception stands for, with its message. */
function failure(context: QuickJSContext, error: QuickJSHandle, state: RunState, guard: Guard): SkillOutcome {
  const thrown = describe(context.dump(error));
  error.dispose();
  const stop = hostStop(state);
  if (stop && 'kill' in stop) return { ok: false, kill: stop.kill, message: stop.message, logs: state.logs };
  const kill = killOf(thrown, guard);
  const message = kill === 'timeout' ? timeoutMessage(guard) : kill === 'memory' ? memoryMessage(guard, thrown.message) : `${thrown.name}: ${thrown.message}`;
  return { ok: false, kill, message: message.slice(0, MAX_MESSAGE), logs: state.logs };
}

function killOf(thrown: { name: string; message: string }, guard: Guard): KillReason {
  if (guard.memoryExceeded) return 'memory';
  if (thrown.name === 'InternalError' && thrown.message === 'interrupted') return 'timeout';
  if (thrown.name === 'InternalError' && /^(out of memory|stack overflow|string too long)/.test(thrown.message)) return 'memory';
  return 'error';
}

function describe(dumped: unknown): { name: string; message: string } {
  if (typeof dumped === 'object' && dumped !== null && 'message' in dumped) {
    const e = dumped as { name?: unknown; message?: unknown };
    return { name: typeof e.name === 'string' ? e.name : 'Error', message: String(e.message) };
  }
  return { name: 'thrown', message: typeof dumped === 'string' ? dumped : JSON.stringify(dumped) ?? String(dumped) };
}

const timeoutMessage = (guard: Guard): string => `the skill ran past its wall time of ${guard.wallMs} ms`;
const memoryMessage = (guard: Guard, detail: string): string => `the skill used more than its ${guard.memoryBytes} bytes of memory${detail ? ` (${detail})` : ''}`;
