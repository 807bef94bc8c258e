// The HTTP side of federated sync (spec 4.14 `svc sync`; docs/sync.md "What the user sees"): the
// status and peers the CLI shows, brain pairing, `now`, `forget`, and a note's revisions. The spec
// leaves these shapes "not shown"; docs/sync.md describes each. Times are epoch milliseconds.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { BRAIN_ID_PATTERN, Cursor, SYNC_FAILURE_REASONS, SyncPairRequest } from './sync-link';

const BrainId = () => Type.String({ pattern: BRAIN_ID_PATTERN, maxLength: 36 });
const WsUrl = () => Type.String({ minLength: 1, maxLength: 2048, pattern: '^wss?://' });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** How a peer is known: pinned by pairing, and where its URL came from. */
export const SYNC_PEER_SOURCES = ['paired', 'static', 'mdns'] as const;
/** What the link to a peer is doing now. */
export const SYNC_PEER_STATES = ['connected', 'connecting', 'waiting', 'idle', 'forgotten'] as const;

export const SyncFailureInfo = Type.Object(
  {
    reason: Type.Union(SYNC_FAILURE_REASONS.map((r) => Type.Literal(r))),
    code: Type.String(),
    message: Type.String(),
    at: Type.Integer(),
  },
  { additionalProperties: false },
);
export type SyncFailureInfo = Static<typeof SyncFailureInfo>;

export const SyncPeerView = Type.Object(
  {
    brain_id: BrainId(),
    name: Type.String(),
    /** The pairing's device id on this brain (`svc pair list`), null for a peer paired from this side. */
    device_id: Nullable(Type.String()),
    /** Where this brain dials it, null when it only ever dials in. */
    url: Nullable(Type.String()),
    /** Where `url` came from. */
    source: Type.Union(SYNC_PEER_SOURCES.map((s) => Type.Literal(s))),
    state: Type.Union(SYNC_PEER_STATES.map((s) => Type.Literal(s))),
    /** Which side dialled the open link. */
    direction: Nullable(Type.Union([Type.Literal('outbound'), Type.Literal('inbound')])),
    paired_at: Type.Integer(),
    /** The last time a session with it was established or applied its ops. */
    last_synced_at: Nullable(Type.Integer()),
    /** When this brain dials it next (state `waiting`). */
    next_attempt_at: Nullable(Type.Integer()),
    last_failure: Type.Union([SyncFailureInfo, Type.Null()]),
    /** Ops this brain holds that the peer's last known cursor lacks. */
    ops_behind: Type.Integer({ minimum: 0 }),
    /** What the peer last said it holds. */
    cursor: Type.Union([Cursor, Type.Null()]),
  },
  { additionalProperties: false },
);
export type SyncPeerView = Static<typeof SyncPeerView>;

/** GET /api/sync/status. `enabled: false` is a deliberately single-node brain (SVC_SYNC_DISABLED=1 or sync.enabled false). */
export const SyncStatus = Type.Object(
  {
    enabled: Type.Boolean(),
    /** Why sync is off, when it is: `SVC_SYNC_DISABLED=1` or `settings sync.enabled=false`. */
    disabled_by: Nullable(Type.String()),
    brain_id: BrainId(),
    /** SHA-256 of this brain's sync public key, base64url (what a peer pinned); null when disabled. */
    key_fingerprint: Nullable(Type.String()),
    active_peers: Type.Integer({ minimum: 0 }),
    was_active_recent: Type.Boolean(),
    peers: Type.Integer({ minimum: 0 }),
    last_synced_at: Nullable(Type.Integer()),
    /** Ops in this brain's log: written here, and in all. */
    ops: Type.Object({ local: Type.Integer({ minimum: 0 }), total: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
    cursor: Cursor,
    /** Failed sessions since start, by reason (svc_sync_failures_total). */
    failures: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);
export type SyncStatus = Static<typeof SyncStatus>;

export const SyncPeerList = Type.Object({ peers: Type.Array(SyncPeerView) }, { additionalProperties: false });
export type SyncPeerList = Static<typeof SyncPeerList>;

/** POST /api/sync/pair (admin): complete brain pairing with the pair URL another brain minted (`svc pair --kind brain`). */
export const SyncPairBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 4096, description: 'The svc://pair URL of kind brain' }),
    pin: Type.Optional(Type.String({ pattern: '^[0-9]{4,8}$' })),
    /** The peer's /sync URL to dial, when the pair URL's own addresses do not reach it. */
    sync_url: Type.Optional(WsUrl()),
  },
  { additionalProperties: false },
);
export type SyncPairBody = Static<typeof SyncPairBody>;

/** POST /api/sync/pair/accept (public: the token is the proof): the completing brain's request, plus where it can be dialled. */
export const SyncPairAcceptBody = Type.Composite([SyncPairRequest, Type.Object({ urls: Type.Optional(Type.Array(WsUrl(), { maxItems: 8 })) })], { additionalProperties: false });
export type SyncPairAcceptBody = Static<typeof SyncPairAcceptBody>;

/** POST /api/sync/now: dial now and wait (up to `timeout_ms`) until each peer is caught up. */
export const SyncNowBody = Type.Object(
  {
    peer: Type.Optional(BrainId()),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000, default: 15_000 })),
  },
  { additionalProperties: false },
);
export type SyncNowBody = Static<typeof SyncNowBody>;

export const SyncNowResult = Type.Object(
  {
    peers: Type.Array(
      Type.Object(
        {
          brain_id: BrainId(),
          /** `synced`: connected and nothing left to send either way; else what stopped it. */
          outcome: Type.Union([Type.Literal('synced'), Type.Literal('failed'), Type.Literal('timeout'), Type.Literal('unreachable')]),
          sent: Type.Integer({ minimum: 0 }),
          received: Type.Integer({ minimum: 0 }),
          failure: Type.Union([SyncFailureInfo, Type.Null()]),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type SyncNowResult = Static<typeof SyncNowResult>;

/** GET /api/memory/notes/:id/revisions: the current version, the concurrent edits kept in its history, and whether it is deleted. */
export const NoteRevision = Type.Object(
  {
    text: Type.String(),
    source: Type.String(),
    tags: Type.Array(Type.String()),
    /** The brain that wrote this version. */
    brain_id: Type.String(),
    /** When it was written, by that brain's clock (the stamp's milliseconds). */
    at: Type.Integer(),
    /** The hybrid logical clock stamp (docs/sync.md "Clock"). */
    hlc: Type.String(),
  },
  { additionalProperties: false },
);
export type NoteRevision = Static<typeof NoteRevision>;

export const NoteRevisions = Type.Object(
  {
    id: Type.String(),
    current: Type.Union([NoteRevision, Type.Null()]),
    history: Type.Array(NoteRevision),
    deleted: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type NoteRevisions = Static<typeof NoteRevisions>;
