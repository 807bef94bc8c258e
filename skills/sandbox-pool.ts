// Skills run in worker threads (docs/skills.md "Where skills run"), not in the brain's own thread, for
// two reasons: WebAssembly memory never shrinks (a skill that allocates up to its limit would leave the
// brain ~140 MiB bigger for good), and a CPU-bound skill would hold the brain's event loop for its
// whole wall time. The pool starts a worker (skills/sandbox-worker.ts) on the first run and ends it
// after `idleMs` with nothing to do, so an idle brain holds no worker and no WebAssembly memory; a
// worker whose memory grew past `recycleBytes` is ended after its run. At most `size` runs go at once,
// at most `maxQueued` wait, and a run that has not answered `graceMs` after its wall time has its
// worker terminated. The SkillHost stays in this thread: the worker asks for every http and call_tool.
// Loading this module loads no QuickJS (only types come from skills/sandbox.ts).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ApprovalPending, DEFAULT_WALL_MS, PolicyRefusal } from './host-functions';
import { RunQueue } from './run-queue';
import type { SkillOutcome, SkillRun } from './sandbox';
import type { FromWorker, HostAnswer, HostCall, ToWorker, WireError } from './sandbox-worker';

export const DEFAULT_POOL_SIZE = 1;
export const DEFAULT_MAX_QUEUED = 64;
export const DEFAULT_IDLE_MS = 60_000;
/** Above the 16 MiB a worker starts with and what ordinary runs grow it to; below the ~83 MiB a 64 MiB bomb leaves. */
export const DEFAULT_RECYCLE_BYTES = 48 * 1024 * 1024;
export const DEFAULT_GRACE_MS = 1000;
export const WORKER_FILE = 'sandbox-worker.mjs';
/** How many folders above this module the default worker lookup climbs (.test-build/test/<area>/<sub>/). */
const WORKER_SEARCH_LEVELS = 4;

export interface SandboxPoolOptions {
  /** Runs at once, one worker each. */
  size?: number;
  /** Runs that may wait for a worker; one more is refused with SandboxPoolFull. */
  maxQueued?: number;
  /** A worker with nothing to do for this long ends. */
  idleMs?: number;
  /** A worker whose WebAssembly memory passed this many bytes ends after its run. */
  recycleBytes?: number;
  /** How long past its wall time a run may take to answer before its worker is terminated. */
  graceMs?: number;
  /** The built worker; by default sandbox-worker.mjs next to this module or in a folder above it. */
  workerUrl?: URL;
  /** Called with each worker the pool starts (metrics, tests). */
  onWorker?: (worker: Worker) => void;
}

export interface SandboxPoolStats {
  /** Workers alive, busy or idle. */
  workers: number;
  busy: number;
  queued: number;
  /** Workers started since the pool was made. */
  started: number;
  /** The WebAssembly memory the last finished run left in its worker, in bytes (null before any). */
  lastHeapBytes: number | null;
}

/** More runs wait than the pool's bound allows. */
export class SandboxPoolFull extends Error {
  override name = 'SandboxPoolFull';
}

/** run() after close(). */
export class SandboxPoolClosed extends Error {
  override name = 'SandboxPoolClosed';
}

interface Job {
  run: SkillRun;
  params: Record<string, unknown>;
  resolve: (outcome: SkillOutcome) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  timer: NodeJS.Timeout | undefined;
  /** Terminated by the pool, or lost: its exit is no news. */
  ended: boolean;
}

export class SandboxPool {
  private readonly queue: RunQueue<Job>;
  private readonly slots = new Set<Slot>();
  private workerUrl: URL | undefined;
  private closed = false;
  private started = 0;
  private lastHeapBytes: number | null = null;

  constructor(private readonly options: SandboxPoolOptions = {}) {
    this.queue = new RunQueue(options.size ?? DEFAULT_POOL_SIZE, options.maxQueued ?? DEFAULT_MAX_QUEUED);
    this.workerUrl = options.workerUrl;
  }

  /** Runs a skill in a worker; the same outcomes as runSkill, plus the pool's own (see the module comment). */
  run(run: SkillRun): Promise<SkillOutcome> {
    if (this.closed) return Promise.reject(new SandboxPoolClosed('the sandbox pool is closed'));
    return new Promise((resolve, reject) => {
      // What runSkill would hand the skill: a JSON copy (a BigInt or a cycle throws here as it would there).
      const job: Job = { run, params: JSON.parse(JSON.stringify(run.params)) as Record<string, unknown>, resolve, reject };
      const admission = this.queue.offer(job);
      if (admission === 'full') reject(new SandboxPoolFull(`${this.queue.maxWaiting} skill runs are already waiting for the sandbox`));
      else if (admission === 'run') this.start(job);
    });
  }

  stats(): SandboxPoolStats {
    const busy = [...this.slots].filter((s) => s.job !== null).length;
    return { workers: this.slots.size, busy, queued: this.queue.queued, started: this.started, lastHeapBytes: this.lastHeapBytes };
  }

  /** Ends every worker; runs in flight or waiting answer an `error` kill saying the pool closed. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) job.resolve(closedOutcome());
    const ending = [...this.slots].map((slot) => {
      const job = slot.job;
      slot.job = null;
      job?.resolve(closedOutcome());
      return this.end(slot);
    });
    await Promise.all(ending);
  }

  /** Gives a job that holds a slot of the queue to an idle worker, or to a new one. */
  private start(job: Job): void {
    let slot: Slot;
    try {
      slot = this.idleSlot() ?? this.spawn();
    } catch (error) {
      // No worker could start (its file is missing): this run fails with why, the next one tries again.
      job.reject(error instanceof Error ? error : new Error(String(error)));
      this.next();
      return;
    }
    this.assign(slot, job);
  }

  private idleSlot(): Slot | undefined {
    for (const slot of this.slots) if (slot.job === null) return slot;
    return undefined;
  }

  private spawn(): Slot {
    this.workerUrl ??= findWorkerFile(import.meta.url);
    // No inherited command-line flags (`--input-type`, `--test`... break a worker) and no environment:
    // the sandbox needs neither.
    const worker = new Worker(this.workerUrl, { name: 'svc-skill-sandbox', env: {}, execArgv: [] });
    const slot: Slot = { worker, job: null, timer: undefined, ended: false };
    this.slots.add(slot);
    this.started++;
    worker.on('message', (message: FromWorker) => this.onMessage(slot, message));
    worker.on('error', (error) => this.lost(slot, `the sandbox worker failed: ${error.message}`));
    worker.on('messageerror', (error) => this.lost(slot, `the sandbox worker sent what could not be read: ${error.message}`));
    worker.on('exit', (code) => this.lost(slot, `the sandbox worker exited (code ${code}) before the run ended`));
    this.options.onWorker?.(worker);
    return slot;
  }

  /**
   * A busy worker is referenced (an awaited run keeps its process alive, as any pending I/O does); an
   * idle one is not, so a pool that is not closed never holds a process open.
   */
  private assign(slot: Slot, job: Job): void {
    clearTimeout(slot.timer);
    slot.job = job;
    slot.worker.ref();
    const wallMs = job.run.limits?.wallMs ?? DEFAULT_WALL_MS;
    const graceMs = this.options.graceMs ?? DEFAULT_GRACE_MS;
    slot.timer = setTimeout(() => this.overrun(slot, job, wallMs, graceMs), wallMs + graceMs).unref();
    const { source, limits, host } = job.run;
    send(slot, { type: 'run', source, params: job.params, limits, tools: [...host.tools] });
  }

  private onMessage(slot: Slot, message: FromWorker): void {
    const job = slot.job;
    if (job === null) return;
    if (message.type === 'call') this.hostCall(slot, job, message.callId, message.call);
    else this.finish(slot, job, message.outcome, message.heapBytes);
  }

  /** Runs the host function here and posts its answer, unless the run ended meanwhile. */
  private hostCall(slot: Slot, job: Job, callId: number, call: HostCall): void {
    const host = job.run.host;
    const work = (): Promise<unknown> => (call.kind === 'http' ? host.http(call.request) : host.callTool(call.name, call.args));
    const reply = (answer: HostAnswer): void => {
      if (slot.job === job) send(slot, { type: 'answer', callId, answer });
    };
    Promise.resolve()
      .then(work)
      .then(
        (value) => reply(valueAnswer(value)),
        (error: unknown) => reply({ ok: false, error: wireError(error) }),
      );
  }

  private finish(slot: Slot, job: Job, outcome: SkillOutcome, heapBytes: number): void {
    clearTimeout(slot.timer);
    slot.job = null;
    this.lastHeapBytes = heapBytes;
    job.resolve(outcome);
    if (heapBytes > (this.options.recycleBytes ?? DEFAULT_RECYCLE_BYTES)) void this.end(slot);
    else this.rest(slot);
    this.next();
  }

  private rest(slot: Slot): void {
    slot.worker.unref();
    slot.timer = setTimeout(() => void this.end(slot), this.options.idleMs ?? DEFAULT_IDLE_MS).unref();
  }

  /** The worker did not answer by its wall time and grace: the interpreter is stuck where no interrupt reaches. */
  private overrun(slot: Slot, job: Job, wallMs: number, graceMs: number): void {
    if (slot.job !== job) return;
    slot.job = null;
    job.resolve({ ok: false, kill: 'timeout', message: `the skill ran past its wall time of ${wallMs} ms and did not stop within ${graceMs} ms more; its worker was ended`, logs: [] });
    void this.end(slot);
    this.next();
  }

  /** A worker that failed or exited on its own: its run answers an `error` kill; the pool goes on. */
  private lost(slot: Slot, why: string): void {
    if (slot.ended) return;
    this.forget(slot);
    const job = slot.job;
    slot.job = null;
    if (job === null) return;
    job.resolve({ ok: false, kill: 'error', message: why, logs: [] });
    this.next();
  }

  private end(slot: Slot): Promise<number> {
    this.forget(slot);
    return slot.worker.terminate();
  }

  private forget(slot: Slot): void {
    slot.ended = true;
    clearTimeout(slot.timer);
    this.slots.delete(slot);
  }

  /** A slot of the queue came free: the next waiting job takes it. */
  private next(): void {
    if (this.closed) return;
    const job = this.queue.done();
    if (job !== undefined) this.start(job);
  }
}

function send(slot: Slot, message: ToWorker): void {
  slot.worker.postMessage(message);
}

const closedOutcome = (): SkillOutcome => ({ ok: false, kill: 'error', message: 'the sandbox pool closed before the run ended', logs: [] });

/** A host function's value as JSON text; one with no JSON crosses as the message it throws with. */
function valueAnswer(value: unknown): HostAnswer {
  try {
    return { ok: true, json: JSON.stringify(value) };
  } catch (error) {
    return { ok: true, unsendable: error instanceof Error ? error.message : String(error) };
  }
}

/** A host error as the worker tells errors apart: a policy refusal, a held call, or any other. */
export function wireError(error: unknown): WireError {
  if (error instanceof ApprovalPending) return { kind: 'approval', name: error.name, message: error.message, requestId: error.requestId, tool: error.tool };
  if (error instanceof PolicyRefusal) return { kind: 'policy', name: error.name, message: error.message };
  if (error instanceof Error) return { kind: 'error', name: error.name, message: error.message };
  return { kind: 'error', name: 'Error', message: String(error) };
}

/**
 * The built worker: dist/sandbox-worker.mjs sits next to the bundle's chunks; the tests' copy is
 * .test-build/sandbox-worker.mjs, a few folders above a compiled test (build.mjs).
 */
export function findWorkerFile(from: string): URL {
  let dir = dirname(fileURLToPath(from));
  for (let level = 0; level <= WORKER_SEARCH_LEVELS; level++) {
    const candidate = join(dir, WORKER_FILE);
    if (existsSync(candidate)) return pathToFileURL(candidate);
    dir = dirname(dir);
  }
  throw new Error(`${WORKER_FILE} is not next to ${from} nor up to ${WORKER_SEARCH_LEVELS} folders above it: build it (node build.mjs) or pass workerUrl`);
}
