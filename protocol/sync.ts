// Federated memory sync (issue 15, docs/sync.md): the op every brain appends for a change of a note, an
// episode or a knowledge triple, and the version vector that says which ops a brain has applied. Spec
// 4.13 leaves the /sync message shapes "not shown"; the choices are documented in docs/sync.md.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { LIMITS } from './memory';
import { Line, Text } from './text';

/** A brain id: a lower-case version 4 UUID (mesh/brain-id.ts), all ASCII, so byte and code-unit order agree. */
export const BRAIN_ID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$';
export const BrainId = Type.String({ pattern: BRAIN_ID_PATTERN, description: 'the origin brain (mesh/brain-id.ts)' });

/**
 * A hybrid logical clock stamp as sortable text (sync/hlc.ts): 12 hex digits of physical milliseconds,
 * 6 of the logical counter, then the brain id. String order is the clocks' total order.
 */
export const HLC_PATTERN = '^[0-9a-f]{12}-[0-9a-f]{6}-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$';
export const HlcText = Type.String({ pattern: HLC_PATTERN, description: 'hybrid logical clock stamp, lexicographically sortable' });

/** `<origin brain id>:<seq>`: the seq-th op the origin brain wrote (1, 2, 3, … without gaps). */
export const OP_ID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}:[1-9][0-9]{0,15}$';
export const OpId = Type.String({ pattern: OP_ID_PATTERN });

const RecordId = (prefix: string) => Type.String({ pattern: `^${prefix}_[0-9a-z]{1,64}$` });
const Ms = (description: string) => Type.Integer({ minimum: 0, maximum: 2 ** 48 - 1, description });

/** Limits of what one op may carry (an oversized op is refused like a malformed one). */
export const SYNC_LIMITS = {
  summaryChars: 64 * 1024,
  /**
   * Largest seq an op may carry: 2^48, a thousand ops a second for 8,900 years, far enough under
   * 2^53 that the next seq of a brain (and every count of ops) stays an exact integer.
   */
  maxSeq: 2 ** 48,
} as const;

// ── Bodies: whole records, never patches (an edit is a put of the whole note) ──────────────────────
export const NoteBody = Type.Object(
  {
    text: Text({ minLength: 1, maxLength: LIMITS.noteTextBytes, blank: false }),
    source: Line({ minLength: 1, maxLength: 200, blank: false }),
    tags: Type.Array(Line({ minLength: 1, maxLength: LIMITS.tagLength, blank: false }), { maxItems: LIMITS.tags }),
    created_at: Ms('when the note was first written, ms since the epoch'),
  },
  { additionalProperties: false },
);
export type NoteBody = Static<typeof NoteBody>;

export const EpisodeBody = Type.Object(
  {
    session_id: Type.Union([Line({ minLength: 1, maxLength: 200 }), Type.Null()]),
    summary: Text({ maxLength: SYNC_LIMITS.summaryChars }),
    reason: Type.Union([Type.Literal('session_end'), Type.Literal('compaction'), Type.Literal('manual')]),
    summariser: Line({ minLength: 1, maxLength: 200 }),
    message_count: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
    started_at: Type.Union([Ms('first message of the summarised span'), Type.Null()]),
    ended_at: Type.Union([Ms('last message of the summarised span'), Type.Null()]),
    created_at: Ms('when the summary was written'),
  },
  { additionalProperties: false },
);
export type EpisodeBody = Static<typeof EpisodeBody>;

/** One source asserting a fact; the triple's id must be the hash of these parts (sync/triple-id.ts). */
export const TripleAssertion = Type.Object(
  {
    subject: Line({ minLength: 1, maxLength: 200, blank: false }),
    predicate: Line({ minLength: 1, maxLength: 100, blank: false }),
    object: Line({ minLength: 1, maxLength: 500, blank: false }),
    source: Line({ minLength: 1, maxLength: 200, blank: false }),
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
  },
  { additionalProperties: false },
);
export type TripleAssertion = Static<typeof TripleAssertion>;

export const TripleRetraction = Type.Object({ source: Line({ minLength: 1, maxLength: 200, blank: false }) }, { additionalProperties: false });
export type TripleRetraction = Static<typeof TripleRetraction>;

// ── Ops ──────────────────────────────────────────────────────────────────────────────────────────────
const stamp = {
  op_id: OpId,
  origin: BrainId,
  seq: Type.Integer({ minimum: 1, maximum: SYNC_LIMITS.maxSeq }),
  hlc: HlcText,
};
const op = <K extends string, P extends Record<string, TSchema>>(kind: K, props: P) =>
  Type.Object({ ...stamp, kind: Type.Literal(kind), ...props }, { additionalProperties: false });

export const NotePutOp = op('note.put', {
  record_id: RecordId('note'),
  base: Type.Union([OpId, Type.Null()], { description: 'the version this one was written over on its origin (null: a new note)' }),
  body: NoteBody,
});
export const NoteDeleteOp = op('note.delete', { record_id: RecordId('note') });
export const EpisodePutOp = op('episode.put', { record_id: RecordId('ep'), body: EpisodeBody });
export const EpisodeDeleteOp = op('episode.delete', { record_id: RecordId('ep') });
export const TriplePutOp = op('triple.put', { record_id: Type.String({ pattern: '^kg_[0-9a-f]{24}$' }), body: TripleAssertion });
export const TripleRetractOp = op('triple.retract', { record_id: Type.String({ pattern: '^kg_[0-9a-f]{24}$' }), body: TripleRetraction });
export const TripleDeleteOp = op('triple.delete', { record_id: Type.String({ pattern: '^kg_[0-9a-f]{24}$' }) });

export const SyncOp = Type.Union([NotePutOp, NoteDeleteOp, EpisodePutOp, EpisodeDeleteOp, TriplePutOp, TripleRetractOp, TripleDeleteOp]);
export type SyncOp = Static<typeof SyncOp>;
export type NotePutOp = Static<typeof NotePutOp>;
export type NoteDeleteOp = Static<typeof NoteDeleteOp>;
export type EpisodePutOp = Static<typeof EpisodePutOp>;
export type EpisodeDeleteOp = Static<typeof EpisodeDeleteOp>;
export type TriplePutOp = Static<typeof TriplePutOp>;
export type TripleRetractOp = Static<typeof TripleRetractOp>;
export type TripleDeleteOp = Static<typeof TripleDeleteOp>;
export type SyncOpKind = SyncOp['kind'];
export const SYNC_OP_KINDS: readonly SyncOpKind[] = ['note.put', 'note.delete', 'episode.put', 'episode.delete', 'triple.put', 'triple.retract', 'triple.delete'];

// ── Version vector: which ops a brain has applied, per origin ─────────────────────────────────────
export const OriginCursor = Type.Object(
  {
    through: Type.Integer({ minimum: 0, maximum: SYNC_LIMITS.maxSeq, description: 'every op 1..through of this origin is applied' }),
    extra: Type.Array(Type.Integer({ minimum: 2, maximum: SYNC_LIMITS.maxSeq }), { maxItems: 4096, uniqueItems: true, description: 'ops above through+1 applied out of order, ascending' }),
  },
  { additionalProperties: false },
);
export type OriginCursor = Static<typeof OriginCursor>;

export const VersionVectorWire = Type.Record(Type.String({ pattern: BRAIN_ID_PATTERN }), OriginCursor, { additionalProperties: false });
export type VersionVectorWire = Static<typeof VersionVectorWire>;
