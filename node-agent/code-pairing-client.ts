// The node's side of the 6-digit code flow (node-protocol.md "Pairing a node"; docs/pairing.md "The
// 6-digit code flow"): announce a CSPRNG code, show it, poll /pair/status every 2 s until the person has
// claimed it (the answer carries the node key), the brain says it expired, or the deadline passes.
//   - A code another node already announced (409) is replaced by a new one before it is shown.
//   - 429 waits for Retry-After (or details.retry_after_seconds) and asks again.
//   - A status 404 means the brain forgot the code (it restarted: codes live in memory): the same code,
//     still on the display, is announced again.
//   - While polling, an unreachable brain or a 5xx is a note and the next poll (an answer it cannot
//     read is waited out like pending); the first announce
//     failing that way ends the attempt at once (a wrong --brain should not wait for the timeout).
// Every wait is bounded by the deadline, so the loop ends.
import { AnnounceResponse, CodeStatusResponse } from '../protocol/pairing';
import type { PairCode } from '../mesh/pair-code';
import { Value } from '@sinclair/typebox/value';

export const POLL_MS = 2000;
/** Announce attempts with fresh codes when each is taken by another node. */
export const MAX_CODE_TRIES = 5;
/** Per-request bound: a brain that accepts the connection and never answers is not waited on forever. */
export const REQUEST_MS = 10_000;

export interface ClientDeps {
  fetch(url: string, init: RequestInit): Promise<Response>;
  sleep(ms: number): Promise<void>;
  now(): number;
  newCode(): PairCode;
}

export interface PairRequest {
  brainUrl: string;
  nodeId: string;
  name?: string | undefined;
  /** Epoch ms after which the attempt ends with `timeout`. */
  deadline: number;
  /** Called once, when the brain took the code: show it. */
  onCode(code: PairCode, expiresAt: number): void;
  /** Something the person may want to know while waiting (one line, no newline). */
  onNote(message: string): void;
}

export type PairOutcome =
  | { status: 'paired'; token: string; deviceId: string | undefined; code: PairCode }
  | { status: 'expired'; code: PairCode }
  | { status: 'timeout'; code: PairCode | undefined }
  | { status: 'failed'; message: string };

/**
 * Seconds to wait from a 429: the Retry-After header (delta-seconds or an HTTP date, RFC 9110 10.2.3),
 * else details.retry_after_seconds of the envelope, else one poll interval; clamped to 1 s-15 min.
 */
export function retryAfterMs(header: string | null, body: unknown, nowMs: number): number {
  let seconds: number | undefined;
  if (header !== null && /^\s*\d{1,9}\s*$/.test(header)) seconds = Number(header);
  else if (header !== null && header.trim() !== '' && !Number.isNaN(Date.parse(header))) seconds = (Date.parse(header) - nowMs) / 1000;
  if (seconds === undefined) {
    const details = (body as { error?: { details?: { retry_after_seconds?: unknown } } } | null)?.error?.details;
    if (typeof details?.retry_after_seconds === 'number' && Number.isFinite(details.retry_after_seconds)) seconds = details.retry_after_seconds;
  }
  return Math.round(Math.min(Math.max(seconds ?? POLL_MS / 1000, 1), 900) * 1000);
}

interface Answer {
  status: number;
  body: unknown;
  retryAfter: string | null;
}

async function call(deps: ClientDeps, url: string, init: RequestInit): Promise<Answer | { unreachable: string }> {
  let response: Response;
  try {
    response = await deps.fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_MS) });
  } catch (err) {
    // fetch rejects with a TypeError for network failures and a DOMException for the timeout.
    if (err instanceof TypeError || (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))) {
      const cause = err.cause instanceof Error ? err.cause.message : err.message;
      return { unreachable: cause };
    }
    throw err;
  }
  const text = await response.text();
  let body: unknown = null;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      body = { error: { code: 'NOT_JSON', message: `the answer was not JSON: ${text.slice(0, 80)}`, details: null } };
    }
  }
  return { status: response.status, body, retryAfter: response.headers.get('retry-after') };
}

const messageOf = (answer: Answer): string => {
  const message = (answer.body as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof message === 'string' ? `${answer.status}: ${message}` : `status ${answer.status}`;
};

/** Sleeps `ms`, or until the deadline if that is sooner. */
const wait = (deps: ClientDeps, deadline: number, ms: number): Promise<void> => deps.sleep(Math.max(0, Math.min(ms, deadline - deps.now())));

type Announced = { ok: true; expiresAt: number } | { ok: false; outcome: PairOutcome } | { ok: false; taken: true };

async function announce(deps: ClientDeps, req: PairRequest, code: PairCode): Promise<Announced> {
  const body = JSON.stringify({ code, node_id: req.nodeId, ...(req.name !== undefined ? { name: req.name } : {}) });
  for (;;) {
    if (deps.now() >= req.deadline) return { ok: false, outcome: { status: 'timeout', code: undefined } };
    const answer = await call(deps, `${req.brainUrl}/api/devices/pair/announce`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    if ('unreachable' in answer) return { ok: false, outcome: { status: 'failed', message: `cannot reach the brain at ${req.brainUrl} (${answer.unreachable})` } };
    if (answer.status === 200 && Value.Check(AnnounceResponse, answer.body)) return { ok: true, expiresAt: answer.body.expires_at };
    if (answer.status === 409) return { ok: false, taken: true };
    if (answer.status === 429) {
      const ms = retryAfterMs(answer.retryAfter, answer.body, deps.now());
      req.onNote(`the brain asks to wait ${Math.ceil(ms / 1000)} s before announcing`);
      await wait(deps, req.deadline, ms);
      continue;
    }
    return { ok: false, outcome: { status: 'failed', message: `the brain refused the code (${messageOf(answer)})` } };
  }
}

/** Announces codes until one is free; the code shown is the one the brain took. */
async function announceNew(deps: ClientDeps, req: PairRequest): Promise<{ code: PairCode } | { outcome: PairOutcome }> {
  for (let i = 0; i < MAX_CODE_TRIES; i++) {
    const code = deps.newCode();
    const result = await announce(deps, req, code);
    if (result.ok) {
      req.onCode(code, result.expiresAt);
      return { code };
    }
    if (!('taken' in result)) return { outcome: result.outcome };
  }
  return { outcome: { status: 'failed', message: `${MAX_CODE_TRIES} codes in a row were taken by other nodes; try again` } };
}

export async function pairByCode(deps: ClientDeps, req: PairRequest): Promise<PairOutcome> {
  const first = await announceNew(deps, req);
  if ('outcome' in first) return first.outcome;
  const { code } = first;
  const statusUrl = `${req.brainUrl}/api/devices/pair/status?code=${code}&node_id=${encodeURIComponent(req.nodeId)}`;
  let unreachableNoted = false;
  let delay = POLL_MS;
  for (;;) {
    await wait(deps, req.deadline, delay);
    if (deps.now() >= req.deadline) return { status: 'timeout', code };
    delay = POLL_MS;
    const answer = await call(deps, statusUrl, { method: 'GET' });
    if ('unreachable' in answer || answer.status >= 500) {
      if (!unreachableNoted) req.onNote(`the brain did not answer (${'unreachable' in answer ? answer.unreachable : messageOf(answer)}); still trying`);
      unreachableNoted = true;
      continue;
    }
    unreachableNoted = false;
    if (answer.status === 200) {
      // A status this client does not know (a later brain's) is waited out like pending: minor versions are additive.
      const s = Value.Check(CodeStatusResponse, answer.body) ? answer.body : undefined;
      if (s?.status === 'paired' && s.token !== undefined) return { status: 'paired', token: s.token, deviceId: s.device_id, code };
      if (s?.status === 'expired') return { status: 'expired', code };
      continue;
    }
    if (answer.status === 429) {
      delay = retryAfterMs(answer.retryAfter, answer.body, deps.now());
      continue;
    }
    if (answer.status === 404) {
      req.onNote('the brain no longer knows this code (it restarted?): announcing it again');
      const again = await announce(deps, req, code);
      if (again.ok) continue;
      return 'taken' in again ? { status: 'failed', message: 'the brain forgot this code and another node announced it meanwhile; run pair again for a new one' } : again.outcome;
    }
    return { status: 'failed', message: `the brain refused the status poll (${messageOf(answer)})` };
  }
}
