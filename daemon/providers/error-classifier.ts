// Turns what a failed LLM call left behind (HTTP status, error body, headers, transport flags) into
// one ProviderErrorClass. Pure and SDK-free so it can be property-tested; the adapters extract the
// facts from the openai / @anthropic-ai/sdk error objects (sdk-failure.ts). docs/providers.md has
// the table this code implements.
import type { ProviderErrorClass } from './provider';

export interface FailureFacts {
  /** HTTP status, absent for transport failures. */
  status?: number | undefined;
  /** error.type / error.code from the JSON error body (OpenAI: code + type, Anthropic: type). */
  errorType?: string | undefined;
  errorCode?: string | undefined;
  message: string;
  /** Raw Retry-After (seconds or HTTP-date, RFC 9110 10.2.3) and retry-after-ms (OpenAI, non-standard). */
  retryAfter?: string | null | undefined;
  retryAfterMs?: string | null | undefined;
  /** The request timed out (connect, first token or idle between chunks). */
  timedOut?: boolean;
  /** Connection refused/reset/DNS: no HTTP answer at all. */
  network?: boolean;
}

export interface Classification {
  errorClass: ProviderErrorClass;
  /** Server's wish for how long to stay away, when it said so. */
  retryAfterMs?: number;
}

// Wording used by OpenAI, Anthropic, vLLM, llama.cpp, Ollama and LM Studio when a prompt does not fit.
const CONTEXT_OVERFLOW =
  /context[_ ]length|context window|maximum context|prompt is too long|too many tokens|exceeds? (the )?(model'?s? )?(maximum|max|context)|input is too long|n_ctx|reduce the length/i;
const BILLING = /insufficient[_ ]quota|billing|credit balance|payment|exceeded your current quota/i;
const OVERLOADED = /overloaded/i;

/** Retry-After as milliseconds from `nowMs`; undefined when absent or unparseable. */
export function parseRetryAfter(facts: Pick<FailureFacts, 'retryAfter' | 'retryAfterMs'>, nowMs: number): number | undefined {
  const ms = facts.retryAfterMs?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms));
  const raw = facts.retryAfter?.trim();
  if (!raw) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.round(Number(raw) * 1000);
  const date = Date.parse(raw);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

export function classifyFailure(facts: FailureFacts, nowMs: number): Classification {
  const errorClass = classOf(facts);
  const retryAfterMs = errorClass === 'rate_limit' || errorClass === 'overloaded' ? parseRetryAfter(facts, nowMs) : undefined;
  return retryAfterMs === undefined ? { errorClass } : { errorClass, retryAfterMs };
}

function classOf(f: FailureFacts): ProviderErrorClass {
  const type = `${f.errorType ?? ''} ${f.errorCode ?? ''}`;
  const text = `${type} ${f.message}`;
  if (f.status === undefined) {
    if (f.timedOut) return 'timeout';
    if (f.network) return 'network';
    // An error event inside an otherwise fine stream (Anthropic `event: error`) carries only a type.
    return classOfType(type) ?? (OVERLOADED.test(f.message) ? 'overloaded' : 'unknown');
  }
  switch (f.status) {
    case 401:
    case 403:
      return 'auth';
    case 402:
      return 'billing';
    case 429:
      // OpenAI answers an exhausted prepaid balance with 429 insufficient_quota: waiting will not help.
      return BILLING.test(type) ? 'billing' : 'rate_limit';
    case 408:
    case 504:
      return 'timeout';
    case 503:
    case 529:
      return 'overloaded';
    case 400:
    case 413:
    case 422:
      if (CONTEXT_OVERFLOW.test(text)) return 'context_overflow';
      // Anthropic reports a low credit balance as a 400 invalid_request_error.
      if (BILLING.test(text)) return 'billing';
      return classOfType(type) ?? 'bad_request';
  }
  return classOfType(type) ?? (f.status >= 500 && OVERLOADED.test(text) ? 'overloaded' : 'unknown');
}

/** Anthropic error types (and OpenAI codes) that say more than the status does. */
function classOfType(type: string): ProviderErrorClass | undefined {
  if (/rate_limit/.test(type)) return 'rate_limit';
  if (/authentication|permission|invalid_api_key/.test(type)) return 'auth';
  if (BILLING.test(type)) return 'billing';
  if (/overloaded/.test(type)) return 'overloaded';
  if (/timeout/.test(type)) return 'timeout';
  if (/context_length/.test(type)) return 'context_overflow';
  return undefined;
}

/** Classes that say something about one key (another key of the same provider may work). */
export const KEY_SCOPED: ReadonlySet<ProviderErrorClass> = new Set(['rate_limit', 'auth', 'billing']);

/** Classes after which no other provider is tried: the request itself is wrong (docs/providers.md). */
export const NO_FAILOVER: ReadonlySet<ProviderErrorClass> = new Set(['bad_request']);
