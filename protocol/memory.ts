// Memory wire shapes (spec 1.3, 2.9, 4.4). Spec 2.16 and 4.4 leave note, episode and knowledge payloads,
// pagination and limits "not shown": the choices made here are documented in docs/memory.md.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Id, Line, MAX_ID_LENGTH, Text } from './text';

const Iso = (description: string) => Type.String({ format: 'date-time', description });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const Tier = Type.Union([Type.Literal('note'), Type.Literal('episode'), Type.Literal('knowledge')], {
  description: 'Persistent memory tier an item lives in (working memory is per session and never searched globally)',
});
export type Tier = Static<typeof Tier>;

/** Bounds of every `limit` query parameter (docs/memory.md). */
export const LIMITS = {
  search: { min: 1, max: 50, default: 10 },
  page: { min: 1, max: 200, default: 50 },
  knowledgeDepth: { min: 0, max: 3, default: 1 },
  noteTextBytes: 32 * 1024,
  tags: 16,
  tagLength: 64,
} as const;

// Input strings come from protocol/text.ts (no NUL or other control characters). Tags have no
// `default`: a note created without tags has none, and a PATCH must not gain `tags: []` (it replaced them).
const Tags = Type.Array(Line({ minLength: 1, maxLength: LIMITS.tagLength, blank: false }), { maxItems: LIMITS.tags });
const NoteText = Text({ minLength: 1, maxLength: LIMITS.noteTextBytes, blank: false });
const Source = Line({ minLength: 1, maxLength: 200, blank: false, description: 'Who or what produced it: user, agent, session:<id>, channel:<name>, ...' });

// ── Notes ────────────────────────────────────────────────────────────────────────────────────────
export const Note = Type.Object({
  id: Type.String({ description: 'note_<time-sortable random>' }),
  tier: Type.Literal('note'),
  text: Type.String(),
  source: Type.String(),
  tags: Type.Array(Type.String()),
  created_at: Iso('creation time, UTC'),
  updated_at: Iso('last edit, UTC'),
  recall: Type.Object({ count: Type.Integer({ minimum: 0 }), last_at: Nullable(Iso('last time it was returned by search')) }),
});
export type Note = Static<typeof Note>;

export const NoteCreate = Type.Object(
  {
    text: NoteText,
    source: Type.Optional(Source),
    tags: Type.Optional(Tags),
  },
  { additionalProperties: false },
);
export type NoteCreate = Static<typeof NoteCreate>;

export const NoteUpdate = Type.Object(
  {
    text: Type.Optional(NoteText),
    tags: Type.Optional(Tags),
  },
  { additionalProperties: false, minProperties: 1, description: 'Changes only the fields it names; an empty object is a 400' },
);
export type NoteUpdate = Static<typeof NoteUpdate>;

// ── Episodes ─────────────────────────────────────────────────────────────────────────────────────
export const EpisodeReason = Type.Union([Type.Literal('session_end'), Type.Literal('compaction'), Type.Literal('manual')]);
export type EpisodeReason = Static<typeof EpisodeReason>;

export const Episode = Type.Object({
  id: Type.String({ description: 'ep_<time-sortable random>' }),
  tier: Type.Literal('episode'),
  session_id: Nullable(Type.String()),
  summary: Type.String(),
  reason: EpisodeReason,
  summariser: Type.String({ description: 'extractive, or the provider id of the LLM that wrote it' }),
  message_count: Type.Integer({ minimum: 0 }),
  started_at: Nullable(Iso('first message of the summarised span')),
  ended_at: Nullable(Iso('last message of the summarised span')),
  created_at: Iso('when the summary was written'),
  recall: Note.properties.recall,
});
export type Episode = Static<typeof Episode>;

export const PageQuery = Type.Object(
  {
    cursor: Type.Optional(Line({ minLength: 1, maxLength: 200, description: 'next_cursor of the previous page' })),
    limit: Type.Optional(Type.Integer({ minimum: LIMITS.page.min, maximum: LIMITS.page.max, default: LIMITS.page.default })),
  },
  { additionalProperties: false },
);
export type PageQuery = Static<typeof PageQuery>;

export const EpisodePage = Type.Object({
  items: Type.Array(Episode),
  next_cursor: Nullable(Type.String({ description: 'pass as ?cursor= for the next (older) page; null at the end' })),
});
export type EpisodePage = Static<typeof EpisodePage>;

// ── Knowledge graph ──────────────────────────────────────────────────────────────────────────────
export const TripleInput = Type.Object(
  {
    subject: Line({ minLength: 1, maxLength: 200, blank: false }),
    predicate: Line({ minLength: 1, maxLength: 100, blank: false }),
    object: Line({ minLength: 1, maxLength: 500, blank: false }),
    confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.8 })),
  },
  { additionalProperties: false },
);
export type TripleInput = Static<typeof TripleInput>;

export const Triple = Type.Object({
  id: Type.String({ description: 'kg_<hash of normalised subject|predicate|object>: the same fact has the same id everywhere' }),
  tier: Type.Literal('knowledge'),
  subject: Type.String(),
  predicate: Type.String(),
  object: Type.String(),
  confidence: Type.Number({ minimum: 0, maximum: 1, description: 'noisy-or of the confidences of its sources' }),
  sources: Type.Array(Type.Object({ source: Type.String(), confidence: Type.Number(), at: Iso('when this source asserted it') })),
  created_at: Iso('first assertion'),
  updated_at: Iso('latest assertion or edit'),
  recall: Note.properties.recall,
});
export type Triple = Static<typeof Triple>;

export const TriplesCreate = Type.Object(
  { triples: Type.Array(TripleInput, { minItems: 1, maxItems: 500 }), source: Source },
  { additionalProperties: false },
);
export type TriplesCreate = Static<typeof TriplesCreate>;

export const TripleUpdate = Type.Object(
  { confidence: Type.Number({ minimum: 0, maximum: 1 }) },
  { additionalProperties: false, description: 'Changing subject, predicate or object is a different fact: delete and add instead' },
);
export type TripleUpdate = Static<typeof TripleUpdate>;

export const KnowledgeQuery = Type.Object(
  {
    subject: Type.Optional(Line({ minLength: 1, maxLength: 200 })),
    predicate: Type.Optional(Line({ minLength: 1, maxLength: 100 })),
    object: Type.Optional(Line({ minLength: 1, maxLength: 500 })),
    depth: Type.Optional(Type.Integer({ minimum: LIMITS.knowledgeDepth.min, maximum: LIMITS.knowledgeDepth.max, default: LIMITS.knowledgeDepth.default, description: 'hops followed from the matched triples through their objects and subjects' })),
    limit: Type.Optional(Type.Integer({ minimum: LIMITS.page.min, maximum: LIMITS.page.max, default: LIMITS.page.default })),
  },
  { additionalProperties: false },
);
export type KnowledgeQuery = Static<typeof KnowledgeQuery>;

export const KnowledgeResult = Type.Object({
  triples: Type.Array(Type.Composite([Triple, Type.Object({ hop: Type.Integer({ minimum: 0, description: '0 = matched the filter directly' }) })])),
  truncated: Type.Boolean({ description: 'true when limit cut the traversal short' }),
});
export type KnowledgeResult = Static<typeof KnowledgeResult>;

// ── Search (spec 2.9: id, timestamp, summary, relevance; plus tier and its own fields) ──────────────
export const SearchQuery = Type.Object(
  {
    q: Text({ minLength: 1, maxLength: 1000, blank: false }),
    limit: Type.Optional(Type.Integer({ minimum: LIMITS.search.min, maximum: LIMITS.search.max, default: LIMITS.search.default })),
  },
  { additionalProperties: false },
);
export type SearchQuery = Static<typeof SearchQuery>;

export const SearchResultItem = Type.Object({
  id: Type.String(),
  timestamp: Iso('creation time of the item, UTC'),
  summary: Type.String({ description: 'note text, episode summary, or "subject predicate object"' }),
  relevance: Type.Number({ minimum: 0, maximum: 1, description: 'same meaning in every tier; below the floor nothing is returned' }),
  tier: Tier,
  signals: Type.Object({
    lexical: Type.Number({ minimum: 0, maximum: 1, description: 'idf-weighted share of the query terms the item contains' }),
    semantic: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'cosine similarity, null when vectors were not used' })),
    decay: Type.Number({ minimum: 0, maximum: 1, description: 'retention weight from the forgetting curve (1 = fresh or recently recalled)' }),
  }),
});
export type SearchResultItem = Static<typeof SearchResultItem>;

export const Degraded = Type.Object({
  component: Type.Literal('embeddings'),
  reason: Type.String({ description: 'timeout, unreachable, http_<status>, bad_response, aborted, index_loading' }),
});
export type Degraded = Static<typeof Degraded>;

export const SearchResponse = Type.Object({
  results: Type.Array(SearchResultItem),
  mode: Type.Union([Type.Literal('hybrid'), Type.Literal('lexical')], { description: 'lexical when no embedding provider is configured or it failed' }),
  degraded: Nullable(Degraded),
});
export type SearchResponse = Static<typeof SearchResponse>;

export const IdParams = Type.Object({ id: Id() });
export type IdParams = Static<typeof IdParams>;

export const Deleted = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });
export type Deleted = Static<typeof Deleted>;

// ── Session snapshots (spec 1.3: snapshot, branch and restore conversation plus working memory) ────
export const SnapshotCreate = Type.Object(
  { session_id: Id(), label: Type.Optional(Line({ minLength: 1, maxLength: 200, blank: false })) },
  { additionalProperties: false },
);
export type SnapshotCreate = Static<typeof SnapshotCreate>;

export const Snapshot = Type.Object({
  id: Type.String({ description: 'snap_<time-sortable random>' }),
  session_id: Type.String({ description: 'the session it was taken from' }),
  label: Nullable(Type.String()),
  message_count: Type.Integer({ minimum: 0 }),
  working_count: Type.Integer({ minimum: 0, description: 'working-memory items captured' }),
  created_at: Iso('when it was taken'),
});
export type Snapshot = Static<typeof Snapshot>;

export const SnapshotDetail = Type.Composite([
  Snapshot,
  Type.Object({
    messages: Type.Array(Type.Object({ role: Type.String(), content: Type.String() }, { additionalProperties: true })),
    working: Type.Array(Type.Object({ key: Type.String(), value: Type.String() })),
  }),
]);
export type SnapshotDetail = Static<typeof SnapshotDetail>;

export const SnapshotList = Type.Object({ items: Type.Array(Snapshot) });
export type SnapshotList = Static<typeof SnapshotList>;
export const SnapshotListQuery = Type.Object({ session_id: Type.Optional(Id()) }, { additionalProperties: false });
export type SnapshotListQuery = Static<typeof SnapshotListQuery>;

export const SnapshotRestore = Type.Object(
  { session_id: Type.Optional(Id({ description: 'defaults to the session the snapshot was taken from' })) },
  { additionalProperties: false },
);
export type SnapshotRestore = Static<typeof SnapshotRestore>;

export const SessionRef = Type.Object({ session_id: Type.String(), snapshot_id: Type.String() });
export type SessionRef = Static<typeof SessionRef>;

// ── Decay and backend (svc memory decay / backend) ──────────────────────────────────────────────
export const DecayPatch = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    half_life_days: Type.Optional(Type.Number({ minimum: 1, maximum: 36500 })),
    rehearsal_factor: Type.Optional(Type.Number({ minimum: 1, maximum: 10 })),
    weight: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type DecayPatch = Static<typeof DecayPatch>;

export const DecayReport = Type.Object({
  params: Type.Object({ enabled: Type.Boolean(), half_life_days: Type.Number(), rehearsal_factor: Type.Number(), weight: Type.Number() }),
  /** How retention is spread over the stored items (nothing is ever deleted by decay). */
  retention: Type.Object({
    items: Type.Integer({ minimum: 0 }),
    buckets: Type.Array(Type.Object({ from: Type.Number(), to: Type.Number(), items: Type.Integer({ minimum: 0 }) })),
    never_recalled: Type.Integer({ minimum: 0 }),
  }),
  curve: Type.Array(Type.Object({ days: Type.Number(), recalls: Type.Integer(), retention: Type.Number(), relevance_factor: Type.Number() })),
});
export type DecayReport = Static<typeof DecayReport>;

export const BackendReport = Type.Object({
  store: Type.Object({ engine: Type.Literal('sqlite-fts5'), tokenizer: Type.String(), path: Type.String() }),
  counts: Type.Object({ notes: Type.Integer(), episodes: Type.Integer(), triples: Type.Integer(), wiki_pages: Type.Integer(), snapshots: Type.Integer() }),
  embeddings: Type.Object({
    configured: Type.Boolean(),
    base_url: Nullable(Type.String()),
    model: Nullable(Type.String()),
    indexed: Type.Integer({ minimum: 0, description: 'items with a vector of the current model (loaded so far)' }),
    index_ready: Type.Boolean({ description: 'false while the vector index loads after start-up; search is lexical until then' }),
    dim: Nullable(Type.Integer()),
    probe: Nullable(Type.Object({ ok: Type.Boolean(), ms: Type.Number(), reason: Nullable(Type.String()) })),
  }),
  search: Type.Object({ relevance_floor: Type.Number(), recency_weight: Type.Number(), query_timeout_ms: Type.Integer() }),
});
export type BackendReport = Static<typeof BackendReport>;

// ── Wiki (compiled pages with provenance) ──────────────────────────────────────────────────────
export const WikiStatement = Type.Object({
  text: Type.String(),
  sources: Type.Array(Type.String(), { minItems: 1, description: 'ids of the notes, episodes and triples it came from' }),
});
export const WikiPageSummary = Type.Object({
  slug: Type.String(),
  title: Type.String(),
  kind: Type.Union([Type.Literal('entity'), Type.Literal('topic')]),
  statements: Type.Integer({ minimum: 0 }),
  built_at: Iso('last compile'),
  stale: Type.Boolean({ description: 'a source changed since the last compile; reading the page recompiles it' }),
});
export type WikiPageSummary = Static<typeof WikiPageSummary>;
export const WikiPage = Type.Composite([WikiPageSummary, Type.Object({ body: Type.Array(WikiStatement), source_ids: Type.Array(Type.String()) })]);
export type WikiPage = Static<typeof WikiPage>;
export const WikiList = Type.Object({ items: Type.Array(WikiPageSummary) });
export type WikiList = Static<typeof WikiList>;
export const WikiRebuild = Type.Object({ pages: Type.Integer(), removed: Type.Integer(), ms: Type.Number() });
export type WikiRebuild = Static<typeof WikiRebuild>;
export const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH, pattern: '^[a-z0-9][a-z0-9-]*$' }) });
export type SlugParams = Static<typeof SlugParams>;
