// Ops (docs/sync.md, "The model"): every change of a synced record is one op, stamped by its origin
// brain with a hybrid logical clock and numbered 1, 2, 3, … per origin. An op from the wire is checked
// twice: its shape (protocol/sync.ts) and its consistency — the op id, the origin, the seq and the
// stamp's brain must name the same op, and a triple's id must be the hash of its parts — so a forged
// op cannot pose as another brain's or overwrite another fact.
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { SyncOp } from '../protocol/sync';
import { decodeHlc, encodeHlc, type Hlc } from './hlc';
import { tripleId } from './triple-id';

type WithoutStamp<T> = T extends unknown ? Omit<T, 'op_id' | 'origin' | 'seq' | 'hlc'> : never;
/** An op before its origin stamps it. */
export type UnstampedOp = WithoutStamp<SyncOp>;
/** A change as a repository describes it: a note put's base is the version the replica holds as current. */
export type LocalChange = Exclude<UnstampedOp, { kind: 'note.put' }> | Omit<Extract<UnstampedOp, { kind: 'note.put' }>, 'base'>;

export type OpRefusal = 'malformed' | 'forged';
export type ParsedOp = { ok: true; op: SyncOp; hlc: Hlc } | { ok: false; reason: OpRefusal; detail: string };

export const opId = (origin: string, seq: number): string => `${origin}:${seq}`;

/** The op a replica appends for a local change. */
export function stampOp(change: UnstampedOp, origin: string, seq: number, hlc: Hlc): SyncOp {
  return { ...change, op_id: opId(origin, seq), origin, seq, hlc: encodeHlc(hlc) };
}

let checker: TypeCheck<typeof SyncOp> | undefined;
const schema = (): TypeCheck<typeof SyncOp> => (checker ??= TypeCompiler.Compile(SyncOp));

/** Whether the op's parts agree with each other; the reason when they do not. */
function inconsistency(op: SyncOp, hlc: Hlc): string | null {
  if (op.op_id !== opId(op.origin, op.seq)) return `op_id ${op.op_id} is not ${op.origin}:${op.seq}`;
  if (hlc.brain !== op.origin) return `stamp of brain ${hlc.brain} on an op of ${op.origin}`;
  if (op.kind === 'triple.put' && op.record_id !== tripleId(op.body.subject, op.body.predicate, op.body.object)) return `${op.record_id} is not the id of its fact`;
  if (op.kind === 'note.put' && op.base !== null && op.base === op.op_id) return 'a version written over itself';
  return null;
}

/** An op as received: the typed op with its decoded stamp, or why it is refused. */
export function parseOp(value: unknown): ParsedOp {
  const check = schema();
  if (!check.Check(value)) {
    const first = check.Errors(value).First();
    return { ok: false, reason: 'malformed', detail: first ? `${first.path || '/'}: ${first.message}` : 'not an op' };
  }
  const hlc = decodeHlc(value.hlc);
  if (hlc === undefined) return { ok: false, reason: 'malformed', detail: `hlc ${value.hlc}` };
  const problem = inconsistency(value, hlc);
  return problem === null ? { ok: true, op: value, hlc } : { ok: false, reason: 'forged', detail: problem };
}
