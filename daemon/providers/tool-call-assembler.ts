// Both APIs stream a tool call's arguments as JSON text in pieces (OpenAI: choices[].delta.tool_calls
// keyed by index; Anthropic: input_json_delta per content block index). The port promises whole
// ToolCall events, so pieces are collected here and parsed once the call is complete.
import { ProviderError } from './provider';
import type { ToolCall } from '../kernel/conversation';

interface Partial {
  id: string;
  name: string;
  json: string;
}

export class ToolCallAssembler {
  private readonly parts = new Map<number, Partial>();

  constructor(private readonly provider: string) {}

  get size(): number {
    return this.parts.size;
  }

  /** Adds whatever this delta carries; id and name usually come once, arguments in many pieces. */
  add(index: number, delta: { id?: string | undefined; name?: string | undefined; arguments?: string | undefined }): void {
    let p = this.parts.get(index);
    if (!p) {
      p = { id: '', name: '', json: '' };
      this.parts.set(index, p);
    }
    if (delta.id) p.id = delta.id;
    if (delta.name) p.name += p.name === delta.name ? '' : delta.name;
    if (delta.arguments) p.json += delta.arguments;
  }

  /** Completes one call (Anthropic content_block_stop); undefined when the index holds none. */
  take(index: number): ToolCall | undefined {
    const p = this.parts.get(index);
    if (!p) return undefined;
    this.parts.delete(index);
    return this.finish(index, p);
  }

  /** Completes every call still open, in index order (OpenAI: at the end of the stream). */
  takeAll(): ToolCall[] {
    const calls = [...this.parts.entries()].sort(([a], [b]) => a - b).map(([i, p]) => this.finish(i, p));
    this.parts.clear();
    return calls;
  }

  private finish(index: number, p: Partial): ToolCall {
    if (!p.name) throw new ProviderError('unknown', `tool call ${index} arrived without a name`, this.provider);
    return { id: p.id || `call_${index}`, name: p.name, arguments: parseArguments(p.json, p.name, this.provider) };
  }
}

function parseArguments(json: string, name: string, provider: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new ProviderError('unknown', `model sent invalid JSON arguments for tool ${name}`, provider);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ProviderError('unknown', `model sent non-object arguments for tool ${name}`, provider);
  }
  return value as Record<string, unknown>;
}
