// Anthropic through the official @anthropic-ai/sdk. One instance is one (provider, key) pair. The SDK
// parses the SSE events (message_start, content_block_start/delta/stop, message_delta, message_stop,
// error); this file maps messages and tools to the Messages API and the events back to ChatEvents.
import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, RawMessageStreamEvent, StopReason, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ChatEvent, ChatRequest, Provider, Usage } from './provider';
import type { ChatMessage, ToolSpec } from '../kernel/conversation';
import { StallGuard } from './stall-guard';
import { adapterFailure, listModelIds, plainSchema, type AdapterConfig } from './adapter-calls';
import { LazyClient } from '../kernel/lazy-module';
import { loadAnthropic } from './sdk-loader';
import { ToolCallAssembler } from './tool-call-assembler';

export const ANTHROPIC_DEFAULT_MODEL = 'claude-3-5-haiku-latest';
/** The Messages API requires max_tokens; this is used when the turn loop sets none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

export class AnthropicProvider implements Provider {
  readonly kind = 'anthropic' as const;
  private readonly connection: LazyClient<typeof Anthropic, Anthropic>;

  constructor(private readonly config: AdapterConfig) {
    this.connection = new LazyClient(loadAnthropic, (Sdk) =>
      new Sdk({
        apiKey: config.apiKey ?? 'no-key',
        baseURL: config.baseURL ?? 'https://api.anthropic.com',
        maxRetries: 0,
        logLevel: 'off',
        openTelemetry: false,
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
      const { system, messages } = toAnthropicMessages(request.messages);
      const { client, sdk } = await this.connection.get();
      const stream = await client.messages.create(
        {
          model,
          max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
          messages,
          stream: true,
          ...(system ? { system } : {}),
          ...(request.tools?.length ? { tools: request.tools.map(toAnthropicTool) } : {}),
        },
        { signal: guard.signal },
      );
      yield* this.events(stream, guard, model, sdk);
    } catch (err) {
      throw this.failure(err, guard);
    } finally {
      guard.done();
    }
  }

  private async *events(stream: AsyncIterable<RawMessageStreamEvent>, guard: StallGuard, model: string, sdk: typeof Anthropic): AsyncIterable<ChatEvent> {
    const calls = new ToolCallAssembler(this.config.id);
    const usage: Usage = { input_tokens: 0, output_tokens: 0 };
    let stop: StopReason | null = null;
    let answeredBy = model;
    let stopped = false;
    for await (const event of stream) {
      guard.tick();
      switch (event.type) {
        case 'message_start':
          answeredBy = event.message.model || model;
          usage.input_tokens = event.message.usage.input_tokens;
          break;
        case 'content_block_start':
          if (event.content_block.type === 'tool_use') calls.add(event.index, { id: event.content_block.id, name: event.content_block.name });
          break;
        case 'content_block_delta':
          if (event.delta.type === 'text_delta') yield { type: 'text_delta', text: event.delta.text };
          else if (event.delta.type === 'input_json_delta') calls.add(event.index, { arguments: event.delta.partial_json });
          break;
        case 'content_block_stop': {
          const call = calls.take(event.index);
          if (call) yield { type: 'tool_call', call };
          break;
        }
        case 'message_delta':
          stop = event.delta.stop_reason ?? stop;
          usage.output_tokens = event.usage.output_tokens;
          break;
        case 'message_stop':
          stopped = true;
          break;
      }
    }
    // The SDK ends the iteration quietly when its signal is aborted: a stall must still be an error.
    if (guard.cause !== null || !stopped) throw this.failure(new sdk.APIConnectionError({ message: 'stream ended before message_stop' }), guard);
    yield { type: 'done', finish_reason: finishReason(stop), usage, provider: this.config.id, model: answeredBy };
  }

  async listModels(signal?: AbortSignal): Promise<string[]> {
    const { client, sdk } = await this.connection.get();
    return listModelIds(this.config, signal, sdk, (signal) => client.models.list({ limit: 100 }, { signal }));
  }

  private failure(err: unknown, guard: StallGuard): Error {
    return adapterFailure(this.config, err, guard, this.connection.sdk);
  }
}

function finishReason(stop: StopReason | null): 'stop' | 'tool_calls' | 'length' {
  if (stop === 'tool_use') return 'tool_calls';
  if (stop === 'max_tokens' || stop === 'model_context_window_exceeded') return 'length';
  return 'stop';
}

/**
 * System messages become the `system` parameter; tool results become tool_result blocks in a user
 * message, consecutive ones merged, because the Messages API alternates user and assistant turns.
 */
export function toAnthropicMessages(input: readonly ChatMessage[]): { system: string; messages: MessageParam[] } {
  const system: string[] = [];
  const messages: MessageParam[] = [];
  for (const m of input) {
    if (m.role === 'system') {
      system.push(m.content);
    } else if (m.role === 'user') {
      messages.push({ role: 'user', content: m.content });
    } else if (m.role === 'assistant') {
      const blocks: ContentBlockParam[] = m.content ? [{ type: 'text', text: m.content }] : [];
      for (const c of m.tool_calls ?? []) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments });
      messages.push({ role: 'assistant', content: blocks.length === 1 && blocks[0]!.type === 'text' ? m.content : blocks });
    } else {
      const block: ToolResultBlockParam = { type: 'tool_result', tool_use_id: m.tool_call_id, content: m.content };
      const last = messages.at(-1);
      if (last?.role === 'user' && Array.isArray(last.content) && last.content.every((b) => b.type === 'tool_result')) last.content.push(block);
      else messages.push({ role: 'user', content: [block] });
    }
  }
  return { system: system.join('\n\n'), messages };
}

export function toAnthropicTool(t: ToolSpec): Tool {
  return { name: t.name, description: t.description, input_schema: plainSchema(t) as Tool.InputSchema };
}
