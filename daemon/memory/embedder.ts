// Embeddings through any OpenAI-compatible /v1/embeddings server (OpenAI, Ollama, llama.cpp, vLLM),
// via the openai client with a base URL (ARCHITECTURE.md, decided dependencies). Failures carry a
// short reason that search reports as `degraded.reason` when it falls back to lexical ranking.
import type OpenAI from 'openai';
import { LazyClient, lazyModule } from '../kernel/lazy-module';

// The openai client loads on first use (kernel/lazy-module.ts); a brain without embeddings never loads it.
const loadOpenAi = lazyModule(() => import('openai').then((m) => m.default));

export interface Embedder {
  /** Recorded with each vector; a model change re-embeds everything (vectors of other models are ignored). */
  readonly model: string;
  embed(texts: readonly string[], opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<Float32Array[]>;
}

export class EmbeddingError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'EmbeddingError';
  }
}

export interface OpenAiEmbedderOptions {
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
  /** Longest a batch embedding (background indexing) may take. */
  timeoutMs?: number;
}

export class OpenAiEmbedder implements Embedder {
  private readonly connection: LazyClient<typeof OpenAI, OpenAI>;
  readonly model: string;

  constructor(private readonly opts: OpenAiEmbedderOptions) {
    this.model = opts.model;
    // Local servers (Ollama, llama.cpp) need no key, but the client insists on one.
    this.connection = new LazyClient(loadOpenAi, (Sdk) => new Sdk({ baseURL: opts.baseUrl, apiKey: opts.apiKey ?? 'no-key', maxRetries: 0, timeout: opts.timeoutMs ?? 30_000 }));
  }

  async embed(texts: readonly string[], opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    let res: OpenAI.CreateEmbeddingResponse;
    try {
      const { client } = await this.connection.get();
      res = await client.embeddings.create(
        { model: this.model, input: [...texts], encoding_format: 'float' },
        { timeout: opts.timeoutMs ?? this.opts.timeoutMs ?? 30_000, ...(opts.signal ? { signal: opts.signal } : {}) },
      );
    } catch (err) {
      throw toEmbeddingError(err, this.connection.sdk);
    }
    const data = Array.isArray(res?.data) ? [...res.data].sort((a, b) => a.index - b.index) : [];
    if (data.length !== texts.length || data.some((d) => !Array.isArray(d.embedding) || d.embedding.length === 0)) {
      throw new EmbeddingError('bad_response', `embedding server returned ${data.length} vectors for ${texts.length} inputs`);
    }
    return data.map((d) => Float32Array.from(d.embedding));
  }
}

/** `sdk` is absent when the call failed before the SDK was loaded. */
function toEmbeddingError(err: unknown, sdk: typeof OpenAI | undefined): EmbeddingError {
  if (sdk && err instanceof sdk.APIConnectionTimeoutError) return new EmbeddingError('timeout', err.message);
  if (sdk && err instanceof sdk.APIUserAbortError) return new EmbeddingError('aborted', err.message);
  if (sdk && err instanceof sdk.APIConnectionError) return new EmbeddingError('unreachable', err.message);
  if (sdk && err instanceof sdk.APIError) return new EmbeddingError(`http_${String((err as { status?: number }).status ?? 'error')}`, err.message);
  if (err instanceof Error) return new EmbeddingError('bad_response', err.message);
  return new EmbeddingError('bad_response', String(err));
}
