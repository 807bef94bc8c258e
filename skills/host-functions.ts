// The globals a skill sees (issue 16 "Skills"; docs/skills.md "Host functions"): `log`, `get_param`,
// `set_result`, and the asynchronous `http_get`, `http_post` and `call_tool`, which return QuickJS
// promises settled when the host's promise settles. Every value crosses the boundary as JSON, through
// the context's own JSON.parse/JSON.stringify captured before the skill runs (a skill that replaces
// them changes nothing here). Sizes are bounded; a policy refusal is recorded on the run state, which
// ends the run as a `policy` kill however the skill handles the rejection, and a tool call the
// permission plane holds for approval (ApprovalPending) ends it the same way as a held run.
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle } from 'quickjs-emscripten-core';

export const MAX_LOG_LINES = 200;
export const MAX_LOG_BYTES = 64 * 1024;
export const MAX_RESULT_BYTES = 256 * 1024;
/** Host calls (http, tools) a skill may have awaiting at once. */
export const MAX_PENDING_CALLS = 16;
export const LOG_TRUNCATED = '[log truncated]';
/** A run's limits when it names none (docs/skills.md "Limits"); here so that a light module can read them. */
export const DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024;
export const DEFAULT_WALL_MS = 5000;

export interface HttpRequest {
  method: 'GET' | 'POST';
  url: string;
  body?: string;
  headers?: Record<string, string>;
}
export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What the sandbox needs from its embedder: the manifest's tools, the tool port and the egress. */
export interface SkillHost {
  /** The manifest's `permissions.tools`: a call to any other name is a `policy` kill. */
  tools: readonly string[];
  /** Runs a tool through the permission plane; a rejection reaches the skill as a rejected promise. */
  callTool(name: string, args: unknown): Promise<unknown>;
  /** The network policy's fetch (skills/egress.ts); a PolicyRefusal from it is a `policy` kill. */
  http(request: HttpRequest): Promise<HttpResponse>;
}

/** A host refusal on policy grounds (destination, tool): it ends the run as a `policy` kill. */
export class PolicyRefusal extends Error {
  override name = 'PolicyRefusal';
}

/**
 * A tool call the permission plane holds until the user decides (daemon/kernel/permissions.ts, verdict
 * `pending`). The run ends as held, not as a kill, whatever the skill does with the rejection: its
 * embedder runs it again once the request is answered.
 */
export class ApprovalPending extends Error {
  override name = 'ApprovalPending';
  constructor(
    readonly requestId: string,
    readonly tool: string,
    message = `call_tool: "${tool}" is held for approval (request ${requestId})`,
  ) {
    super(message);
  }
}

/** The held call of a run that ended waiting for an approval. */
export interface HeldCall {
  requestId: string;
  tool: string;
}

/** What the host functions share with the run loop of skills/sandbox.ts. */
export interface RunState {
  logs: string[];
  logBytes: number;
  /** The first policy refusal, which decides the kill. */
  policy: string | null;
  /** The first call held for approval, which ends the run as held (a policy refusal wins over it). */
  held: { call: HeldCall; message: string } | null;
  /** A failure of the host itself while answering the skill (e.g. the answer did not fit). */
  hostError: string | null;
  result: { json: string } | null;
  pending: Set<QuickJSDeferredPromise>;
  /** Wakes the run loop once a host call settled. */
  wake: () => void;
  closed: boolean;
}

export function newRunState(): RunState {
  return { logs: [], logBytes: 0, policy: null, held: null, hostError: null, result: null, pending: new Set(), wake: () => undefined, closed: false };
}

/** The context's own JSON functions, captured before any skill code runs. */
export interface VmJson {
  parse: QuickJSHandle;
  stringify: QuickJSHandle;
  dispose(): void;
}

export function captureJson(context: QuickJSContext): VmJson {
  const json = context.getProp(context.global, 'JSON');
  const parse = context.getProp(json, 'parse');
  const stringify = context.getProp(json, 'stringify');
  json.dispose();
  return { parse, stringify, dispose: () => (parse.dispose(), stringify.dispose()) };
}

/** A host value as a new VM value (JSON-copied); undefined stays undefined. */
export function toVm(context: QuickJSContext, json: VmJson, value: unknown): QuickJSHandle {
  if (value === undefined) return context.undefined;
  const text = JSON.stringify(value);
  if (text === undefined) return context.undefined;
  const str = context.newString(text);
  try {
    return context.unwrapResult(context.callFunction(json.parse, context.undefined, str));
  } finally {
    str.dispose();
  }
}

/** A VM value as JSON text, or undefined when it has none (a function, undefined, a symbol). */
export function fromVm(context: QuickJSContext, json: VmJson, handle: QuickJSHandle): string | undefined {
  const text = context.unwrapResult(context.callFunction(json.stringify, context.undefined, handle));
  try {
    return context.typeof(text) === 'string' ? context.getString(text) : undefined;
  } finally {
    text.dispose();
  }
}

/** Installs the host functions as globals of a fresh context. */
export function installHostFunctions(context: QuickJSContext, json: VmJson, state: RunState, params: Record<string, unknown>, host: SkillHost): void {
  const define = (name: string, fn: (...args: QuickJSHandle[]) => QuickJSHandle | undefined): void => {
    const handle = context.newFunction(name, fn);
    context.setProp(context.global, name, handle);
    handle.dispose();
  };
  define('log', (...args) => (appendLog(state, args.map((a) => logText(context, json, a)).join(' ')), undefined));
  define('get_param', (name) => toVm(context, json, params[stringArg(context, name, 'get_param(name)')]));
  define('set_result', (value) => (setResult(state, value === undefined ? undefined : fromVm(context, json, value)), undefined));
  define('http_get', (url) => hostCall(context, json, state, () => host.http({ method: 'GET', url: stringArg(context, url, 'http_get(url)') })));
  define('http_post', (url, body) => {
    const request = { method: 'POST' as const, url: stringArg(context, url, 'http_post(url, body)'), ...postBody(context, json, body) };
    return hostCall(context, json, state, () => host.http(request));
  });
  define('call_tool', (name, args) => {
    const tool = stringArg(context, name, 'call_tool(name, args)');
    const input: unknown = args === undefined ? {} : JSON.parse(fromVm(context, json, args) ?? '{}');
    if (!host.tools.includes(tool)) throw refuse(state, `call_tool: "${tool}" is not among the tools the manifest lists`);
    return hostCall(context, json, state, () => host.callTool(tool, input));
  });
}

function stringArg(context: QuickJSContext, handle: QuickJSHandle | undefined, usage: string): string {
  if (handle === undefined || context.typeof(handle) !== 'string') throw new TypeError(`${usage} takes a string`);
  return context.getString(handle);
}

function postBody(context: QuickJSContext, json: VmJson, body: QuickJSHandle | undefined): Pick<HttpRequest, 'body' | 'headers'> {
  if (body === undefined || context.typeof(body) === 'undefined') return {};
  if (context.typeof(body) === 'string') return { body: context.getString(body) };
  return { body: fromVm(context, json, body) ?? 'null', headers: { 'content-type': 'application/json' } };
}

function refuse(state: RunState, message: string): PolicyRefusal {
  state.policy ??= message;
  return new PolicyRefusal(message);
}

function logText(context: QuickJSContext, json: VmJson, handle: QuickJSHandle): string {
  const type = context.typeof(handle);
  if (type === 'string') return context.getString(handle);
  if (type === 'function' || type === 'symbol' || type === 'undefined') return type === 'undefined' ? 'undefined' : `[${type}]`;
  return fromVm(context, json, handle) ?? `[${type}]`;
}

/** Keeps a log line while the bounds allow; the first line past them becomes one marker. */
export function appendLog(state: RunState, line: string): void {
  if (state.logs.length >= MAX_LOG_LINES || state.logBytes >= MAX_LOG_BYTES) return;
  const room = MAX_LOG_BYTES - state.logBytes;
  const bytes = Buffer.byteLength(line);
  const kept = state.logs.length === MAX_LOG_LINES - 1 || bytes > room ? LOG_TRUNCATED : line;
  state.logs.push(kept);
  state.logBytes = kept === LOG_TRUNCATED ? MAX_LOG_BYTES : state.logBytes + bytes;
}

function setResult(state: RunState, json: string | undefined): void {
  if (json === undefined) throw new TypeError('set_result(value) takes a JSON-serialisable value');
  if (Buffer.byteLength(json) > MAX_RESULT_BYTES) throw new RangeError(`set_result: the result is larger than ${MAX_RESULT_BYTES} bytes`);
  state.result = { json };
}

/** A host promise as a VM promise: settled (and the run loop woken) when the host's settles. */
function hostCall(context: QuickJSContext, json: VmJson, state: RunState, work: () => Promise<unknown>): QuickJSHandle {
  if (state.pending.size >= MAX_PENDING_CALLS) throw new RangeError(`at most ${MAX_PENDING_CALLS} host calls may be pending at once`);
  const deferred = context.newPromise();
  state.pending.add(deferred);
  const settle = (ok: boolean, value: unknown): void => {
    if (state.closed) return;
    state.pending.delete(deferred);
    if (value instanceof PolicyRefusal) {
      state.policy ??= value.message;
      deferred.dispose();
    } else if (value instanceof ApprovalPending) {
      state.held ??= { call: { requestId: value.requestId, tool: value.tool }, message: value.message };
      deferred.dispose();
    } else answer(context, json, state, deferred, ok, value);
    state.wake();
  };
  work().then(
    (value) => settle(true, value),
    (error: unknown) => settle(false, error),
  );
  return deferred.handle;
}

function answer(context: QuickJSContext, json: VmJson, state: RunState, deferred: QuickJSDeferredPromise, ok: boolean, value: unknown): void {
  let handle: QuickJSHandle;
  try {
    handle = ok ? toVm(context, json, value) : context.newError({ name: 'Error', message: value instanceof Error ? value.message : String(value) });
  } catch (error) {
    // The answer could not enter the VM (its memory limit, or a value with no JSON): the run ends as an error.
    state.hostError = `the host's answer could not be given to the skill: ${error instanceof Error ? error.message : String(error)}`;
    deferred.dispose();
    return;
  }
  if (ok) deferred.resolve(handle);
  else deferred.reject(handle);
  handle.dispose();
  deferred.dispose();
}
