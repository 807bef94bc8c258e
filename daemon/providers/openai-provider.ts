// OpenAI and every OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio) through the official
// `openai` client with a base URL. One instance is one (provider, key) pair; the failover chain picks
// among them. The SDK parses the SSE stream; this file maps messages, tools and chunks.
import type OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { ChatEvent, ChatRequest, Provider, Usage } from './provider';
import type { ChatMessage, ToolSpec } from '../kernel/conversation';
import { ProviderError } from './provider';
import { StallGuard } from './stall-guard';
import { adapterFailure, listModelIds, plainSchema, type AdapterConfig } from './adapter-calls';
import { LazyClient } from '../kernel/lazy-module';
import { loadOpenAi } from './sdk-loader';
import { ToolCallAssembler } from './tool-call-assembler';

export const OPENAI_DEFAULT_MODEL = 'gpt-4o-mini';
const KEYLESS_PLACEHOLDER = 'no-key';

export class OpenAiProvider implements Provider {
  readonly kind = 'openai' as const;
  private readonly connection: LazyClient<typeof OpenAI, OpenAI>;

  constructor(private readonly config: AdapterConfig) {
    this.connection = new LazyClient(loadOpenAi, (Sdk) =>
      new Sdk({
        apiKey: config.apiKey ?? KEYLESS_PLACEHOLDER,
        baseURL: config.baseURL ?? 'https://api.openai.com/v1',
        organization: null,
        project: null,
        // The chain does retries (on another key or provider); the SDK's own would hide failures.
        maxRetries: 0,
        logLevel: 'off',
      }),
    );
  }

  get id(): string {
    return this.config.id;
  }

  async *chat(request: ChatRequest): AsyncIterable<ChatEvent> {
    const guard = new StallGuard(this.config.timeouts, request.signal);
    const model = request.model ?? this.config.model();
    try {
      const { client } = await this.connection.get();
      const stream = await client.chat.completions.create(
        {
          model,
          messages: request.messages.map(toOpenAiMessage),
          stream: true,
          stream_options: { include_usage: true },
          ...(request.tools?.length ? { tools: request.tools.map(toOpenAiTool) } : {}),
          ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
        },
        { signal: guard.signal },
      );
      yield* this.events(stream, guard, model);
    } catch (err) {
      throw this.failure(err, guard);
    } finally {
      guard.done();
    }
  }

  private async *events(stream: AsyncIterable<ChatCompletionChunk>, guard: StallGuard, model: string): AsyncIterable<ChatEvent> {
    const calls = new ToolCallAssembler(this.config.id);
    let finish: ChatCompletionChunk.Choice['finish_reason'] = null;
    let usage: Usage | undefined;
    let answeredBy = model;
    for await (const chunk of stream) {
      guard.tick();
      if (chunk.model) answeredBy = chunk.model;
      if (chunk.usage) usage = { input_tokens: chunk.usage.prompt_tokens, output_tokens: chunk.usage.completion_tokens };
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.delta.content) yield { type: 'text_delta', text: choice.delta.content };
      for (const tc of choice.delta.tool_calls ?? []) calls.add(tc.index, { id: tc.id, name: tc.function?.name, arguments: tc.function?.arguments });
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    // The SDK ends the iteration quietly when its signal is aborted: a stall must still be an error.
    if (guard.cause !== null) throw this.failure(null, guard);
    if (finish === null) throw new ProviderError('network', 'stream ended without a finish_reason', this.config.id, this.keyOpt());
    const hadCalls = calls.size > 0;
    for (const call of calls.takeAll()) yield { type: 'tool_call', call };
    yield { type: 'done', finish_reason: hadCalls ? 'tool_calls' : finish === 'length' ? 'length' : 'stop', ...(usage ? { usage } : {}), provider: this.config.id, model: answeredBy };
  }

  async listModels(signal?: AbortSignal): Promise<string[]> {
    const { client, sdk } = await this.connection.get();
    return listModelIds(this.config, signal, sdk, (signal) => client.models.list({ signal }));
  }

  private failure(err: unknown, guard: StallGuard): Error {
    return adapterFailure(this.config, err, guard, this.connection.sdk);
  }

  private keyOpt(): { keyLabel?: string } {
    return this.config.keyLabel === null ? {} : { keyLabel: this.config.keyLabel };
  }
}

export function toOpenAiMessage(m: ChatMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: m.content };
    case 'assistant':
      return m.tool_calls?.length
        ? {
            role: 'assistant',
            content: m.content === '' ? null : m.content,
            tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
          }
        : { role: 'assistant', content: m.content };
    case 'tool':
      return { role: 'tool', tool_call_id: m.tool_call_id, content: m.content };
  }
}

export function toOpenAiTool(t: ToolSpec): ChatCompletionTool {
  return { type: 'function', function: { name: t.name, description: t.description, parameters: plainSchema(t) } };
}
