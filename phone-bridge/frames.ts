// What the brain sends a phone on /v1/node, read and checked (node-protocol.md "Envelope",
// "Messages"): the envelope, a 1.x version, and the payload against its schema in protocol/node.ts.
// Unknown message types and unknown fields are let through as the contract says (minor versions are
// additive); a frame that cannot be read is reported, never thrown, so one bad frame cannot end the link.
import { Value } from '@sinclair/typebox/value';
import type { Static, TSchema } from '@sinclair/typebox';
import { NODE_OUTBOUND, NodeEnvelope, supportedVersion } from '../protocol/node';

type Outbound = typeof NODE_OUTBOUND;
export type BrainMessageType = keyof Outbound;
export type BrainMessage = { [K in BrainMessageType]: { readonly type: K; readonly payload: Static<Outbound[K]> } }[BrainMessageType];

export type DecodedBrainFrame =
  | { readonly kind: 'message'; readonly message: BrainMessage }
  /** A well-formed frame of a type this client does not read. */
  | { readonly kind: 'unknown'; readonly type: string }
  /** `actionId`: the action_id of a hup_action_request whose payload was wrong, so it can still be answered. */
  | { readonly kind: 'invalid'; readonly problem: string; readonly actionId: string | null };

const isKnown = (type: string): type is BrainMessageType => Object.hasOwn(NODE_OUTBOUND, type);

function firstProblems(schema: TSchema, value: unknown): string {
  return [...Value.Errors(schema, value)]
    .slice(0, 3)
    .map((e) => `${e.path || '/'} ${e.message}`)
    .join('; ');
}

export function decodeBrainFrame(text: string): DecodedBrainFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) return { kind: 'invalid', problem: 'not JSON', actionId: null };
    throw err;
  }
  if (!Value.Check(NodeEnvelope, value)) return { kind: 'invalid', problem: `not an envelope: ${firstProblems(NodeEnvelope, value)}`, actionId: null };
  if (!supportedVersion(value.hup_version)) return { kind: 'invalid', problem: `hup_version ${value.hup_version} is not 1.x`, actionId: null };
  if (!isKnown(value.type)) return { kind: 'unknown', type: value.type };
  const type: BrainMessageType = value.type;
  const payload: Record<string, unknown> = value.payload;
  const schema: TSchema = NODE_OUTBOUND[type];
  const id = type === 'hup_action_request' ? payload.action_id : undefined;
  if (!Value.Check(schema, payload)) {
    const actionId = typeof id === 'string' && id.length > 0 && id.length <= 64 ? id : null;
    return { kind: 'invalid', problem: `${type}: ${firstProblems(schema, payload)}`, actionId };
  }
  return { kind: 'message', message: { type, payload } as BrainMessage };
}
