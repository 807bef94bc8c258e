// Decodes one /sync frame (protocol/sync-link.ts): size, UTF-8 text, JSON, then the schema of its
// `type`. Nothing here throws: every way a frame can be wrong is a coded refusal, so a peer cannot take
// the link's state machine, let alone the brain, down. Checks compile on first use (a brain that never
// syncs never pays for them).
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import { MAX_SYNC_FRAME_BYTES, SYNC_FRAMES, SYNC_REFUSALS, type HelloFrame, type SyncFrame, type SyncFrameType, type SyncRefusalCode } from '../protocol/sync-link';
import { schemaProblems } from '../protocol/schema-problems';

/** A refused frame or link: the code (its reason and close code are SYNC_REFUSALS[code]) and a message for the log. */
export interface SyncRefusal {
  readonly code: SyncRefusalCode;
  readonly message: string;
}

export type DecodedSyncFrame = { readonly ok: true; readonly frame: SyncFrame; readonly bytes: number } | { readonly ok: false; readonly refusal: SyncRefusal };

/** What `ws` hands a 'message' listener, or a string. */
export type RawSyncFrame = string | Buffer | ArrayBuffer | Buffer[];

const MAX_PROBLEMS = 3;
const TYPES = new Set<string>(Object.keys(SYNC_FRAMES));
const isType = (type: unknown): type is SyncFrameType => typeof type === 'string' && TYPES.has(type);
const checks = new Map<SyncFrameType, TypeCheck<TSchema>>();
const checkOf = (type: SyncFrameType): TypeCheck<TSchema> => {
  let check = checks.get(type);
  if (check === undefined) checks.set(type, (check = TypeCompiler.Compile<TSchema>(SYNC_FRAMES[type])));
  return check;
};

export const refusal = (code: SyncRefusalCode, message: string): SyncRefusal => ({ code, message });
const refused = (code: SyncRefusalCode, message: string): DecodedSyncFrame => ({ ok: false, refusal: refusal(code, message) });

const problems = (check: TypeCheck<TSchema>, value: unknown): string => schemaProblems(check, value, MAX_PROBLEMS);

function bytesOf(data: RawSyncFrame): Buffer | string {
  if (typeof data === 'string') return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
}

/** One frame as the peer sent it: a validated frame, or the refusal to close the link with. */
export function decodeSyncFrame(data: RawSyncFrame, isBinary = false): DecodedSyncFrame {
  if (isBinary) return refused('malformed', 'binary frames are not accepted; send UTF-8 JSON text frames');
  const raw = bytesOf(data);
  const bytes = typeof raw === 'string' ? Buffer.byteLength(raw) : raw.byteLength;
  if (bytes > MAX_SYNC_FRAME_BYTES) return refused('too_large', `frame of ${bytes} bytes is over ${MAX_SYNC_FRAME_BYTES}`);
  let value: unknown;
  try {
    value = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    return refused('malformed', `frame is not JSON: ${err.message.slice(0, 200)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return refused('malformed', 'a frame is a JSON object');
  const type = (value as { type?: unknown }).type;
  if (!isType(type)) return refused('malformed', typeof type === 'string' ? `unknown frame type ${JSON.stringify(type.slice(0, 64))}` : 'a frame has a string `type`');
  const check = checkOf(type);
  if (!check.Check(value)) return refused('malformed', `invalid ${type} frame: ${problems(check, value)}`);
  // The compiled check proved the value is this type's schema; a Map lookup cannot narrow the union.
  return { ok: true, frame: value as SyncFrame, bytes };
}

/** A frame as sent on the wire. */
export const encodeSyncFrame = (frame: SyncFrame): string => JSON.stringify(frame);

/** The failure reason and close code of a refusal. */
export const refusalInfo = (r: SyncRefusal): (typeof SYNC_REFUSALS)[SyncRefusalCode] => SYNC_REFUSALS[r.code];

/** The longest SYNC_HELLO_HEADER value: a hello is about 250 bytes of JSON. */
export const MAX_HELLO_HEADER = 1024;

/** A hello as the upgrade request carries it (SYNC_HELLO_HEADER): base64url of its JSON. */
export const encodeHelloHeader = (hello: HelloFrame): string => Buffer.from(encodeSyncFrame(hello), 'utf8').toString('base64url');

/**
 * The hello of an upgrade request's SYNC_HELLO_HEADER, as the frame text a responder session takes
 * (so an unknown or forgotten brain is refused with its HTTP status before any upgrade), or a refusal.
 */
export function decodeHelloHeader(value: string): { readonly ok: true; readonly text: string } | { readonly ok: false; readonly refusal: SyncRefusal } {
  if (value.length > MAX_HELLO_HEADER) return { ok: false, refusal: refusal('too_large', `a hello header of ${value.length} characters is over ${MAX_HELLO_HEADER}`) };
  if (!/^[A-Za-z0-9_-]*$/.test(value)) return { ok: false, refusal: refusal('malformed', 'the hello header is not base64url') };
  const text = Buffer.from(value, 'base64url').toString('utf8');
  const decoded = decodeSyncFrame(text);
  if (!decoded.ok) return decoded;
  if (decoded.frame.type !== 'hello') return { ok: false, refusal: refusal('unexpected', `the hello header holds a ${decoded.frame.type} frame`) };
  return { ok: true, text };
}
