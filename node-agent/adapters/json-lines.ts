// The JSON-lines device contract (docs/node-agent.md "JSON lines"): one JSON object per line, UTF-8.
//   device → agent  {"event": "temperature", "data": {"celsius": 20.9}}            a reading
//   agent → device  {"id": 7, "action": "set_target", "params": {"celsius": 21.5}}  a command
//   device → agent  {"id": 7, "ok": true, "result": {"celsius": 21.5}}              its reply
//                   {"id": 7, "ok": false, "error": "out of range"}
// Anything else on a line is not understood (counted and logged by the adapter, never an error).
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

const JsonEvent = Type.Object({ event: Type.String({ minLength: 1, maxLength: 64 }), data: Type.Record(Type.String(), Type.Unknown()) });
const JsonReply = Type.Object({
  id: Type.Integer(),
  ok: Type.Boolean(),
  result: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  error: Type.Optional(Type.String({ maxLength: 4000 })),
});
export interface JsonLineReply {
  id: number;
  ok: boolean;
  result?: Record<string, unknown>;
  error?: string;
}

export type JsonLine = { kind: 'event'; event: string; data: Record<string, unknown> } | { kind: 'reply'; reply: JsonLineReply };

/** What a line from the device is, or null when it is neither a reading nor a reply. Never throws. */
export function jsonLine(line: string): JsonLine | null {
  if (!line.startsWith('{')) return null;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    if (err instanceof SyntaxError) return null;
    throw err;
  }
  if (Value.Check(JsonEvent, value)) return { kind: 'event', event: value.event, data: value.data };
  if (Value.Check(JsonReply, value)) return { kind: 'reply', reply: value };
  return null;
}

/** The line that asks the device to run an action. */
export const jsonLineCommand = (id: number, action: string, params: Record<string, unknown>): string => `${JSON.stringify({ id, action, params })}\n`;
