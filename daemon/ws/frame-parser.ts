// Parses one client frame of /v1/session against the protocol (protocol/session.ts). Every way a
// frame can be wrong maps to a stable error code the client gets back; nothing here throws, so a
// malformed frame can never take a connection, let alone the brain, down.
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { ClientMessage } from '../../protocol/session';
import { CLIENT_TYPES, SessionOpen, TextCommand, TurnCancel, SessionClose, SessionLeave, Ping, TelemetryIn } from '../../protocol/session';

export type FrameErrorCode = 'BAD_FRAME' | 'UNKNOWN_TYPE' | 'INVALID_PAYLOAD';

export type ParsedFrame = { ok: true; message: ClientMessage } | { ok: false; code: FrameErrorCode; message: string; details: unknown; sessionId: string };

const SCHEMAS = { session_open: SessionOpen, text_command: TextCommand, turn_cancel: TurnCancel, session_close: SessionClose, session_leave: SessionLeave, ping: Ping, telemetry: TelemetryIn } as const;
type ClientType = keyof typeof SCHEMAS;

/** Each frame type's compiled check, made when the first frame of that type arrives (not at start). */
const CHECKS = new Map<ClientType, TypeCheck<(typeof SCHEMAS)[ClientType]>>();
const checkFor = (type: ClientType): TypeCheck<(typeof SCHEMAS)[ClientType]> => {
  let check = CHECKS.get(type);
  if (!check) CHECKS.set(type, (check = TypeCompiler.Compile<(typeof SCHEMAS)[ClientType]>(SCHEMAS[type])));
  return check;
};

const KNOWN = new Set<string>(CLIENT_TYPES);
const MAX_PROBLEMS = 8;

const fail = (code: FrameErrorCode, message: string, details: unknown = null, sessionId = ''): ParsedFrame => ({ ok: false, code, message, details, sessionId });

export function parseFrame(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): ParsedFrame {
  if (isBinary) return fail('BAD_FRAME', 'binary frames are not accepted; send JSON text frames');
  const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return fail('BAD_FRAME', `frame is not JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail('BAD_FRAME', 'frame must be a JSON object {type, session_id, payload}');
  const frame = value as Record<string, unknown>;
  const sessionId = typeof frame.session_id === 'string' ? frame.session_id.slice(0, 128) : '';
  if (typeof frame.type !== 'string') return fail('BAD_FRAME', 'frame has no string "type"', null, sessionId);
  if (!KNOWN.has(frame.type)) {
    return fail('UNKNOWN_TYPE', `unknown message type ${JSON.stringify(frame.type.slice(0, 64))}`, { accepted: CLIENT_TYPES }, sessionId);
  }
  const check = checkFor(frame.type as ClientType);
  if (!check.Check(value)) {
    const problems: { path: string; message: string }[] = [];
    for (const e of check.Errors(value)) {
      problems.push({ path: e.path || '/', message: e.message });
      if (problems.length >= MAX_PROBLEMS) break;
    }
    return fail('INVALID_PAYLOAD', `invalid ${frame.type} frame: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`, { fields: problems }, sessionId);
  }
  return { ok: true, message: value };
}
