// Decodes one inbound /v1/node frame (node-protocol.md "Envelope", "Messages", "Error codes"): size,
// JSON, envelope, version, deprecated type aliases, and the payload against its TypeBox schema of
// protocol/node.ts. Nothing here throws: every way a frame can be wrong is a coded error the hub
// answers with an `error` frame, so a node cannot take its socket, let alone the brain, down.
//
// The schema checks compile when the first frame that needs them arrives (as daemon/ws/frame-parser.ts
// and the tool registry do): a brain without nodes never pays for them at start.
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { Static, TSchema } from '@sinclair/typebox';
import { MAX_NODE_FRAME_BYTES, NODE_INBOUND, NodeEnvelope, NodeErrorCode, TYPE_ALIASES, supportedVersion, type NodeInboundType } from '../../../protocol/node';
import { schemaProblems } from '../../../protocol/schema-problems';

export type InboundPayloads = { [K in NodeInboundType]: Static<(typeof NODE_INBOUND)[K]> };
/** A validated message, discriminated by its (alias-resolved) type. */
export type InboundMessage = { [K in NodeInboundType]: { readonly type: K; readonly payload: InboundPayloads[K] } }[NodeInboundType];

/** What the hub answers a refused frame with (the `error` frame's fields). */
export interface FrameError {
  readonly code: number;
  readonly name: string;
  readonly message: string;
  /** The error frame's ref_action_id: the action a response was about, else the message type, else null. */
  readonly ref: string | null;
}

export type DecodedFrame =
  /** `alias`: the deprecated name the node used, when it used one. `ts`: the envelope's epoch seconds. */
  | { readonly kind: 'message'; readonly message: InboundMessage; readonly ts: number; readonly alias: string | null }
  /** A well-formed frame of a type this brain does not read: ignored (minor versions are additive). */
  | { readonly kind: 'unknown'; readonly type: string; readonly alias: string | null }
  | { readonly kind: 'error'; readonly error: FrameError };

/** What `ws` hands a 'message' listener, or a string (tests, tools). */
export type RawFrame = string | Buffer | ArrayBuffer | Buffer[];

const MAX_PROBLEMS = 5;
const INBOUND = new Set<string>(Object.keys(NODE_INBOUND));
const isInbound = (type: string): type is NodeInboundType => INBOUND.has(type);

let envelopeCheck: TypeCheck<typeof NodeEnvelope> | undefined;
const payloadChecks = new Map<NodeInboundType, TypeCheck<TSchema>>();
const payloadCheck = (type: NodeInboundType): TypeCheck<TSchema> => {
  let check = payloadChecks.get(type);
  if (!check) payloadChecks.set(type, (check = TypeCompiler.Compile<TSchema>(NODE_INBOUND[type])));
  return check;
};

export const frameError = (name: keyof typeof NodeErrorCode, message: string, ref: string | null = null): FrameError => ({ code: NodeErrorCode[name], name, message, ref });
const refused = (error: FrameError): DecodedFrame => ({ kind: 'error', error });
const quoted = (s: string): string => JSON.stringify(s.length > 64 ? `${s.slice(0, 64)}…` : s);

const problems = (check: TypeCheck<TSchema>, value: unknown): string => schemaProblems(check, value, MAX_PROBLEMS);

function text(data: RawFrame): { text: string; bytes: number } {
  if (typeof data === 'string') return { text: data, bytes: Buffer.byteLength(data) };
  const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
  return { text: buffer.toString('utf8'), bytes: buffer.byteLength };
}

/** The action a hup_action_response answers, for the error's ref (action_id, or its alias request_id). */
function actionRef(payload: unknown): string | null {
  if (payload === null || typeof payload !== 'object') return null;
  const p = payload as { action_id?: unknown; request_id?: unknown };
  const id = typeof p.action_id === 'string' ? p.action_id : typeof p.request_id === 'string' ? p.request_id : null;
  return id === null ? null : id.slice(0, 64);
}

/** One frame as the node sent it: a validated message, an unknown type, or the error to answer. */
export function decodeFrame(data: RawFrame, isBinary: boolean): DecodedFrame {
  if (isBinary) return refused(frameError('bad_schema', 'binary frames are not accepted; send UTF-8 JSON text frames'));
  const { text: body, bytes } = text(data);
  if (bytes > MAX_NODE_FRAME_BYTES) return refused(frameError('payload_too_large', `frame of ${bytes} bytes is over ${MAX_NODE_FRAME_BYTES}`));
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    return refused(frameError('bad_schema', `frame is not JSON: ${err.message.slice(0, 200)}`));
  }
  envelopeCheck ??= TypeCompiler.Compile(NodeEnvelope);
  if (!envelopeCheck.Check(value)) return refused(frameError('bad_schema', `not a HUP envelope {hup_version, type, ts, payload}: ${problems(envelopeCheck, value)}`));
  if (!supportedVersion(value.hup_version)) return refused(frameError('bad_schema', `hup_version ${quoted(value.hup_version)} is not supported; this brain speaks 1.x`));
  const alias = Object.hasOwn(TYPE_ALIASES, value.type) ? value.type : null;
  const type = alias === null ? value.type : TYPE_ALIASES[alias]!;
  if (!isInbound(type)) return { kind: 'unknown', type, alias };
  const check = payloadCheck(type);
  if (!check.Check(value.payload)) {
    return refused(frameError('bad_payload', `invalid ${type} payload: ${problems(check, value.payload)}`, type === 'hup_action_response' ? (actionRef(value.payload) ?? type) : type));
  }
  // The compiled check proved the payload is this type's schema; the union cannot be narrowed by a Map lookup.
  return { kind: 'message', message: { type, payload: value.payload } as InboundMessage, ts: value.ts, alias };
}
