// The worker thread of skills/sandbox-pool.ts (docs/skills.md "Where skills run"): it runs one skill
// at a time with runSkill, and its host is a stand-in that asks the pool's thread for every http and
// call_tool call, where the real SkillHost lives. Answers come back as JSON text and errors as their
// kind, name and message, so that a PolicyRefusal stays a policy kill and an ApprovalPending a held
// run. After each run it reports the thread's WebAssembly memory, which never shrinks: the pool ends a
// worker whose memory grew past its bound. A failure of the sandbox itself (runSkill throwing) ends
// the thread, which the pool answers as an `error` kill.
//   built as dist/sandbox-worker.mjs (and .test-build/sandbox-worker.mjs for the tests) by build.mjs
import { parentPort, type MessagePort } from 'node:worker_threads';
import { ApprovalPending, PolicyRefusal, type HttpRequest, type HttpResponse, type SkillHost } from './host-functions';
import { runSkill, wasmHeapBytes, type SkillLimits, type SkillOutcome } from './sandbox';

/** pool → worker: start a run, or the answer to one of its host calls. */
export type ToWorker = { type: 'run'; source: string; params: Record<string, unknown>; limits?: SkillLimits; tools: string[] } | { type: 'answer'; callId: number; answer: HostAnswer };

/** worker → pool: a host call to make, or the run's outcome with the thread's WebAssembly memory in bytes. */
export type FromWorker = { type: 'call'; callId: number; call: HostCall } | { type: 'done'; outcome: SkillOutcome; heapBytes: number };

export type HostCall = { kind: 'http'; request: HttpRequest } | { kind: 'tool'; name: string; args: unknown };

/**
 * A host function's settled promise: its value as JSON text (undefined when it has none), the message
 * of the JSON.stringify that threw on it (a cycle, a BigInt), or its error.
 */
export type HostAnswer = { ok: true; json: string | undefined } | { ok: true; unsendable: string } | { ok: false; error: WireError };

export type WireError = { kind: 'policy' | 'error'; name: string; message: string } | { kind: 'approval'; name: string; message: string; requestId: string; tool: string };

interface Waiting {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** Serves runs on `port` (the worker's parentPort, or one end of a MessageChannel in a test). */
export function serveRuns(port: MessagePort): void {
  const waiting = new Map<number, Waiting>();
  let nextCall = 0;
  const ask = (call: HostCall): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const callId = nextCall++;
      waiting.set(callId, { resolve, reject });
      post(port, { type: 'call', callId, call });
    });
  port.on('message', (message: ToWorker) => {
    if (message.type === 'run') startRun(port, message, ask);
    else settleCall(waiting, message.callId, message.answer);
  });
}

function post(port: MessagePort, message: FromWorker): void {
  port.postMessage(message);
}

function startRun(port: MessagePort, message: Extract<ToWorker, { type: 'run' }>, ask: (call: HostCall) => Promise<unknown>): void {
  const host: SkillHost = {
    tools: message.tools,
    callTool: (name, args) => ask({ kind: 'tool', name, args }),
    http: (request) => ask({ kind: 'http', request }) as Promise<HttpResponse>,
  };
  runSkill({ source: message.source, params: message.params, limits: message.limits, host }).then(
    (outcome) => post(port, { type: 'done', outcome, heapBytes: wasmHeapBytes() }),
    (error: unknown) => crash(error),
  );
}

/** Ends the thread with the sandbox's own failure: the pool sees the worker's 'error' event. */
function crash(error: unknown): void {
  setImmediate(() => {
    throw error;
  });
}

function settleCall(waiting: Map<number, Waiting>, callId: number, answer: HostAnswer): void {
  const call = waiting.get(callId);
  if (call === undefined) return;
  waiting.delete(callId);
  if (!answer.ok) call.reject(revive(answer.error));
  else if ('unsendable' in answer) call.resolve(unsendable(answer.unsendable));
  else call.resolve(answer.json === undefined ? undefined : JSON.parse(answer.json));
}

/** The error as the host threw it, as far as the sandbox tells errors apart. */
function revive(error: WireError): Error {
  if (error.kind === 'approval') return new ApprovalPending(error.requestId, error.tool, error.message);
  if (error.kind === 'policy') return new PolicyRefusal(error.message);
  const revived = new Error(error.message);
  revived.name = error.name;
  return revived;
}

/**
 * A value the host answered that has no JSON: it fails to enter the skill here exactly as it would in
 * the host's own thread (the sandbox's JSON.stringify throws with the same message).
 */
function unsendable(message: string): { toJSON(): never } {
  return {
    toJSON: () => {
      throw new TypeError(message);
    },
  };
}

if (parentPort !== null) serveRuns(parentPort);
