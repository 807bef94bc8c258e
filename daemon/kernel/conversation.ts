// The conversation types every part of the brain shares: the messages of a turn, the tool calls a
// model makes, and the tools it is offered. Memory stores them, providers speak them, the agent runs
// them; none of those owns them.
import type { Static, TSchema } from '@sinclair/typebox';

export interface ToolCall {
  /** Provider-assigned id, echoed back in the tool result message. */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; name: string; content: string };

/** A tool as offered to the model: JSON-schema arguments (TypeBox schemas are JSON schema). */
export interface ToolSpec<S extends TSchema = TSchema> {
  name: string;
  description: string;
  parameters: S;
}
export type ToolArgs<S extends TSchema> = Static<S>;

