// The skill sandbox (issue 16 "Skills"; docs/skills.md): untrusted JavaScript in QuickJS compiled to
// WebAssembly, one fresh runtime and context per run, disposed after. The source is evaluated as a
// script; when it defines a function `main`, `main(params)` is called and its result awaited, otherwise
// the script's last expression is (awaited when it is a promise). `set_result(value)` wins over either.
// Every run ends as a result, as one of four kills: timeout (the wall time, host waits included),
// memory, error (anything thrown) and policy (a host refusal, whatever the skill did with it), or held:
// a tool call waits for the user's approval (ApprovalPending), which ends the run without a kill.
//
// Memory: this QuickJS build has no malloc_usable_size, so its own malloc limit only refuses single
// allocations larger than the limit and counts 8 bytes for every other block. The limit is therefore
// also enforced by sampling the runtime's real usage in the interrupt handler, and the one WebAssembly
// memory of the process is capped (WASM_HEAP_MAX_BYTES) so that no burst between samples can grow it
// past that.
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import releaseSync from '@jitl/quickjs-wasmfile-release-sync';
import { DEFAULT_MEMORY_BYTES, DEFAULT_WALL_MS, MAX_RESULT_BYTES, captureJson, installHostFunctions, newRunState, toVm, type HeldCall, type RunState, type SkillHost, type VmJson } from './host-functions';

export { DEFAULT_MEMORY_BYTES, DEFAULT_WALL_MS } from './host-functions';
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
/** How a run ended. `kill` and `held` never come together (each side declares the other absent, so `out.kill` reads on any failure). */
export type SkillOutcome =
  | { ok: true; result: unknown; logs: string[] }
  | { ok: false; kill: KillReason; held?: never; message: string; logs: string[] }
  | { ok: false; held: HeldCall; kill?: never; message: string; logs: string[] };
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

interface WasmMemory {
  buffer: ArrayBuffer;
}
let quickjs: Promise<QuickJSWASMModule> | undefined;
let heap: WasmMemory | undefined;
/** Node's WebAssembly, which the ES2023 lib this project compiles against does not declare. */
const wasm = (globalThis as unknown as { WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory } }).WebAssembly;

/** The QuickJS module, loaded on the first run and kept for the process. */
function quickjsModule(): Promise<QuickJSWASMModule> {
  if (quickjs === undefined) {
    heap = new wasm.Memory({ initial: 256, maximum: WASM_HEAP_MAX_BYTES / WASM_PAGE });
    quickjs = newQuickJSWASMModuleFromVariant(newVariant(releaseSync, { wasmMemory: heap }));
  }
  return quickjs;
}

/** Bytes of WebAssembly memory the sandbox holds in this thread: it grows with the runs and never shrinks (0 before the first run). */
export function wasmHeapBytes(): number {
  return heap?.buffer.byteLength ?? 0;
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

/** Interrupts at the deadline, on a policy refusal or a held call, and when the sampled memory passes the limit. */
function interruptWhen(runtime: QuickJSRuntime, state: RunState, guard: Guard): () => boolean {
  let nextSample = 0;
  return () => {
    const now = Date.now();
    if (now > guard.deadline || state.policy !== null || state.held !== null) return true;
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
  if ('message' in settled) return stopped(settled, state);
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

/** What ends a run before its entry settles: a kill the run loop decides, or a held call. */
type Stop = { kill: 'timeout' | 'policy' | 'error'; message: string } | { held: HeldCall; message: string };
type Settled = Step | Stop;

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

function hostStop(state: RunState): Stop | null {
  if (state.policy !== null) return { kill: 'policy', message: state.policy };
  if (state.held !== null) return { held: state.held.call, message: state.held.message };
  if (state.hostError !== null) return { kill: 'error', message: state.hostError };
  return null;
}

function stopped(stop: Stop, state: RunState): SkillOutcome {
  return 'held' in stop ? { ok: false, held: stop.held, message: stop.message, logs: state.logs } : { ok: false, kill: stop.kill, message: stop.message, logs: state.logs };
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
  if (stop) return (value.dispose(), stopped(stop, state));
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
  if (stop) return stopped(stop, state);
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
