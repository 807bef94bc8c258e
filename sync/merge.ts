// The merge rules (docs/sync.md, "The model"), as pure functions from a record's state and one op to the
// record's next state. Each state is a function of the *set* of ops applied to the record, never of
// their order: merging is idempotent, commutative and associative, so replicas that applied the same
// ops hold the same state whatever the network did. Stamps are compared as their sortable text
// (sync/hlc.ts), which is the (HLC, brain id) order.
//
// Notes (and episodes) are registers: the version with the greatest stamp is current. A delete leaves a
// tombstone with its stamp; any version at or below the latest tombstone is deleted. A version that a
// later put was written over (its `base`) is superseded; every other version that lost — a concurrent
// edit, which neither writer had seen — stays as a revision in the note's history. Episodes keep no
// revisions: they are written once, and a later put of an episode is a redaction that must not leave
// the redacted text behind.
//
// Triples hold one entry per source (the latest assertion or retraction of that source by stamp): the
// same fact asserted on two brains is one record with both sources. A triple delete drops every entry
// at or below its stamp.

/** A put of a whole record. */
export interface Version<B> {
  op_id: string;
  hlc: string;
  origin: string;
  /** The version this one was written over on its origin; null for a new record. */
  base: string | null;
  body: B;
}

/** The latest delete of a record: what tombstone collection asks peers about. */
export interface Tombstone {
  op_id: string;
  origin: string;
  seq: number;
  hlc: string;
}

export interface RegisterState<B> {
  /** Live versions that nothing was written over, ascending by stamp: the last is current, the rest history. */
  heads: Version<B>[];
  /** Op id of each version a live put was written over → the greatest stamp of such a put, sorted by op id. */
  superseded: [string, string][];
  tombstone: Tombstone | null;
}

export interface TripleParts {
  subject: string;
  predicate: string;
  object: string;
  hlc: string;
}

export interface SourceEntry {
  /** null: the source withdrew the fact (a forgotten note that was its source). */
  confidence: number | null;
  hlc: string;
  origin: string;
  op_id: string;
}

export interface TripleState {
  /** The spelling of the latest live assertion (the id is the same for every spelling). */
  parts: TripleParts | null;
  /** Per source name, its latest live assertion or retraction, sorted by source name. */
  sources: [string, SourceEntry][];
  tombstone: Tombstone | null;
}

const byHlc = (a: { hlc: string }, b: { hlc: string }): number => (a.hlc < b.hlc ? -1 : a.hlc > b.hlc ? 1 : 0);
const byKey = <T>(a: [string, T], b: [string, T]): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
/** Whether a stamp is deleted by the tombstone. */
const buried = (hlc: string, t: Tombstone | null): boolean => t !== null && hlc <= t.hlc;

export const emptyRegister = <B>(): RegisterState<B> => ({ heads: [], superseded: [], tombstone: null });
export const emptyTriple = (): TripleState => ({ parts: null, sources: [], tombstone: null });

/**
 * Merges a put into a register. `revisions: false` keeps only the current version (episodes).
 * A put at or below the tombstone stays deleted.
 */
export function mergePut<B>(state: RegisterState<B>, v: Version<B>, revisions = true): RegisterState<B> {
  if (buried(v.hlc, state.tombstone) || state.heads.some((h) => h.op_id === v.op_id)) return state;
  let superseded = state.superseded;
  if (v.base !== null) {
    const known = superseded.find(([id]) => id === v.base);
    if (known === undefined) superseded = [...superseded, [v.base, v.hlc] as [string, string]].sort(byKey);
    else if (known[1] < v.hlc) superseded = superseded.map((e) => (e[0] === v.base ? [e[0], v.hlc] : e));
  }
  const wasWrittenOver = superseded.some(([id]) => id === v.op_id);
  let heads = state.heads.filter((h) => h.op_id !== v.base);
  if (!wasWrittenOver) heads = [...heads, v].sort(byHlc);
  if (!revisions) heads = heads.slice(-1);
  return { heads, superseded, tombstone: state.tombstone };
}

/** Merges a delete: the later of the two tombstones stays, and every version at or below it goes. */
export function mergeDelete<B>(state: RegisterState<B>, t: Tombstone): RegisterState<B> {
  if (buried(t.hlc, state.tombstone)) return state;
  return { heads: state.heads.filter((h) => !buried(h.hlc, t)), superseded: state.superseded.filter(([, hlc]) => !buried(hlc, t)), tombstone: t };
}

/** What a register shows: its current version (null when deleted or never written) and the revisions that lost to it. */
export function registerView<B>(state: RegisterState<B>): { current: Version<B> | null; history: Version<B>[]; deleted: boolean } {
  const current = state.heads.at(-1) ?? null;
  return { current, history: state.heads.slice(0, -1), deleted: current === null && state.tombstone !== null };
}

/** Merges one source's assertion (`confidence` a number) or retraction (null) of a fact. */
export function mergeSource(state: TripleState, source: string, entry: SourceEntry, parts: Omit<TripleParts, 'hlc'> | null): TripleState {
  if (buried(entry.hlc, state.tombstone)) return state;
  const known = state.sources.find(([s]) => s === source);
  const sources = known === undefined ? [...state.sources, [source, entry] as [string, SourceEntry]].sort(byKey) : known[1].hlc < entry.hlc ? state.sources.map((e) => (e[0] === source ? [source, entry] as [string, SourceEntry] : e)) : state.sources;
  const newer = parts !== null && (state.parts === null || state.parts.hlc < entry.hlc);
  return { parts: newer ? { ...parts, hlc: entry.hlc } : state.parts, sources, tombstone: state.tombstone };
}

/** Merges a triple delete: every assertion and retraction at or below it goes. */
export function mergeTripleDelete(state: TripleState, t: Tombstone): TripleState {
  if (buried(t.hlc, state.tombstone)) return state;
  return {
    parts: state.parts !== null && !buried(state.parts.hlc, t) ? state.parts : null,
    sources: state.sources.filter(([, e]) => !buried(e.hlc, t)),
    tombstone: t,
  };
}

/** The live sources of a fact (withdrawn ones left out); none means the fact is not shown. */
export const liveSources = (state: TripleState): [string, number][] =>
  state.sources.flatMap(([s, e]): [string, number][] => (e.confidence === null ? [] : [[s, e.confidence]]));
