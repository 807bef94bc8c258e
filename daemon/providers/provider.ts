// The provider port: the one interface between the turn loop and every LLM backend (the embedded
// `local` intent agent, OpenAI and OpenAI-compatible servers, Anthropic) and the failover chain,
// which is itself a Provider. Streaming is an async iterable of events; tool calls arrive whole.
import type { ChatMessage, ToolCall, ToolSpec } from '../kernel/conversation';

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** Overrides the provider's pinned/default model. */
  model?: string;
  maxTokens?: number;
  signal?: AbortSignal;
  /**
   * Set by the failover chain: the providers it passed over before this one and why (no key, key
   * disabled until …). The embedded local agent uses it to say why no model answered.
   */
  passed?: readonly PassedProvider[];
}

/** One provider the failover chain skipped or that failed before the current one was asked. */
export interface PassedProvider {
  provider: string;
  errorClass: ProviderErrorClass | 'cooldown';
  message: string;
}

/** The provider that answers a turn now, as status reports name it. */
export interface AnsweringProvider {
  id: string;
  kind: 'local' | 'openai' | 'anthropic';
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

export type ChatEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'done'; finish_reason: 'stop' | 'tool_calls' | 'length'; usage?: Usage; provider: string; model: string };

export interface Provider {
  /** Stable id used in settings, metrics labels (svc_llm_429_total{provider}) and cooldowns. */
  readonly id: string;
  readonly kind: 'local' | 'openai' | 'anthropic' | 'chain';
  /** Streams one model response. Throws ProviderError before or during the stream on failure. */
  chat(request: ChatRequest): AsyncIterable<ChatEvent>;
  /** Models the provider offers (svc models list). */
  listModels(signal?: AbortSignal): Promise<string[]>;
  /**
   * For a provider that stands for others (the failover chain): the one answering now — the member
   * that answered last while it is still usable, else the first usable one; null when none is.
   */
  answering?(): AnsweringProvider | null;
}

/** Error classes drive cooldowns (daemon/providers): each class puts a key or provider aside for its own time. */
export type ProviderErrorClass = 'rate_limit' | 'auth' | 'billing' | 'overloaded' | 'timeout' | 'context_overflow' | 'bad_request' | 'network' | 'unknown';

export class ProviderError extends Error {
  constructor(
    readonly errorClass: ProviderErrorClass,
    message: string,
    readonly provider: string,
    readonly opts: { status?: number; retryAfterMs?: number; keyLabel?: string } = {},
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** All providers failed or were cooling down: the turn answers the user plainly instead of hanging. */
export class ChainExhaustedError extends Error {
  constructor(readonly attempts: readonly PassedProvider[]) {
    super(`every provider failed: ${attempts.map((a) => `${a.provider} (${a.errorClass})`).join(', ') || 'none configured'}`);
    this.name = 'ChainExhaustedError';
  }
}
