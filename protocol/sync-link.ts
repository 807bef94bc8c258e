// /sync: the link between two brains (issue "Federated memory sync", "The link"; docs/sync.md "The
// link"). Every frame both ends exchange, the messages of brain pairing that pin each other's Ed25519
// key, the refusals with their close codes and HTTP statuses, and the bounded set of failure reasons
// the metrics count. The ops inside a batch are opaque here: protocol/sync.ts validates them.
//
// Frames are JSON text, one object each, discriminated by `type`. Each is commented with its direction:
// the initiator is the brain that dialled, the responder the one that answered.
import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** The link protocol version; a hello of another version is refused (`version`). */
export const SYNC_LINK_VERSION = 1;
/** The context string every handshake signature covers, so a signature made for anything else never verifies here. */
export const SYNC_CONTEXT = 'svc-sync-v1';
/** The context string of the pairing proofs (a key proves it is held by the brain that presents it). */
export const SYNC_PAIR_CONTEXT = 'svc-sync-pair-v1';
/** The upgrade request may carry the hello (base64url of its JSON) so an unknown or revoked brain is a 401 before any upgrade. */
export const SYNC_HELLO_HEADER = 'x-svc-sync-hello';

/** Largest frame in either direction; a bigger one is refused `too_large` (close 1009). */
export const MAX_SYNC_FRAME_BYTES = 1024 * 1024;
/** Most origins a cursor may name: far more brains than a family runs, small enough to bound a frame. */
export const MAX_CURSOR_ORIGINS = 1024;
/** Most ops in one batch (the byte bound usually comes first). */
export const MAX_BATCH_OPS = 10_000;

/** Defaults of a session; the host may pass others (tests do). */
export const SYNC_LINK_DEFAULTS = {
  /** A batch's encoded size, well under MAX_SYNC_FRAME_BYTES. */
  batchBytes: 256 * 1024,
  /** Batches sent and not yet acknowledged, at most. */
  window: 4,
  /** A ping after this long without sending anything. */
  keepaliveMs: 15_000,
  /** The link is dead after this long without receiving anything (three missed keepalives). */
  idleTimeoutMs: 45_000,
  /** The handshake must end within this. */
  handshakeTimeoutMs: 10_000,
  /** An unacknowledged batch is sent again after this (a transport that loses frames; a WebSocket never does). */
  retransmitMs: 20_000,
  /** A clean close waits this long for the batches in flight to be acknowledged. */
  drainMs: 5_000,
} as const;

/** A brain id (mesh/brain-id.ts): a lower-case version 4 UUID. */
export const BRAIN_ID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$';
/** 32 bytes in base64url without padding: a raw Ed25519 public key, a nonce, a key fingerprint (SHA-256). */
export const B64URL_32_PATTERN = '^[A-Za-z0-9_-]{43}$';
/** 64 bytes in base64url without padding: an Ed25519 signature. */
export const B64URL_64_PATTERN = '^[A-Za-z0-9_-]{86}$';

const BrainId = () => Type.String({ pattern: BRAIN_ID_PATTERN, maxLength: 36 });
const Bytes32 = () => Type.String({ pattern: B64URL_32_PATTERN, maxLength: 43 });
const Signature = () => Type.String({ pattern: B64URL_64_PATTERN, maxLength: 86 });
const Seq = () => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Message = () => Type.String({ maxLength: 500 });
const Frame = <T extends string, P extends Record<string, TSchema>>(type: T, props: P) => Type.Object({ type: Type.Literal(type), ...props }, { additionalProperties: false });

/**
 * What a brain has, per origin brain: the highest op counter of that origin it holds (a version
 * vector). An origin it has nothing of is absent (0).
 */
export const Cursor = Type.Record(Type.String({ pattern: BRAIN_ID_PATTERN }), Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), {
  maxProperties: MAX_CURSOR_ORIGINS,
  additionalProperties: false,
});
export type Cursor = Static<typeof Cursor>;

// ── Refusals and failure reasons ───────────────────────────────────────────────────────────────
/** Why a link failed, as the `svc_sync_failures_total{reason}` label: a bounded set. */
export const SYNC_FAILURE_REASONS = ['auth', 'protocol', 'clock_skew', 'timeout', 'io', 'too_large', 'replay'] as const;
export type SyncFailureReason = (typeof SYNC_FAILURE_REASONS)[number];

/** Close codes on /sync (4000–4999 are the application's). */
export const SyncCloseCode = {
  normal: 1000,
  too_large: 1009,
  internal: 1011,
  unauthorized: 4001,
  protocol: 4002,
  version: 4003,
  timeout: 4004,
  replay: 4005,
  clock_skew: 4006,
} as const;

/**
 * Every way a link is refused or fails: its metrics reason, the close code, and the HTTP status when
 * it is decided before the upgrade (the hello in SYNC_HELLO_HEADER).
 */
export const SYNC_REFUSALS = {
  /** The hello names a brain this one never paired with. */
  unknown_peer: { reason: 'auth', close: SyncCloseCode.unauthorized, http: 401 },
  /** The peer was forgotten (the sync CLI's `forget`, to come with the sync capability). */
  revoked_peer: { reason: 'auth', close: SyncCloseCode.unauthorized, http: 401 },
  /** The key fingerprint is not the one pinned at pairing. */
  key_mismatch: { reason: 'auth', close: SyncCloseCode.unauthorized, http: 401 },
  /** A signature does not verify against the pinned key over this connection's transcript. */
  bad_signature: { reason: 'auth', close: SyncCloseCode.unauthorized, http: 401 },
  /** The answering brain is not the one dialled, or the hello is meant for another brain. */
  wrong_peer: { reason: 'auth', close: SyncCloseCode.unauthorized, http: 401 },
  /** A nonce seen before: a replayed hello or a reflected challenge. */
  replay: { reason: 'replay', close: SyncCloseCode.replay, http: 401 },
  /** The hello speaks another link version. */
  version: { reason: 'protocol', close: SyncCloseCode.version, http: 400 },
  /** Not JSON, not a frame, or a frame with bad fields. */
  malformed: { reason: 'protocol', close: SyncCloseCode.protocol, http: 400 },
  /** A well-formed frame at the wrong moment (a batch before the handshake, a second hello). */
  unexpected: { reason: 'protocol', close: SyncCloseCode.protocol, http: 400 },
  /** A frame over MAX_SYNC_FRAME_BYTES, or an op too big for any batch. */
  too_large: { reason: 'too_large', close: SyncCloseCode.too_large, http: 413 },
  /** The handshake did not end in time, or nothing arrived for the idle timeout. */
  timeout: { reason: 'timeout', close: SyncCloseCode.timeout, http: 408 },
  /** A batch holds an op whose id, origin, seq and stamp do not name the same op (protocol/sync.ts). */
  forged: { reason: 'auth', close: SyncCloseCode.protocol, http: 400 },
  /** Applying a batch refused ops from the future beyond the bounded skew. */
  clock_skew: { reason: 'clock_skew', close: SyncCloseCode.clock_skew, http: 400 },
  /** The transport failed, or reading or applying ops failed on this side. */
  io: { reason: 'io', close: SyncCloseCode.internal, http: 500 },
} as const satisfies Record<string, { reason: SyncFailureReason; close: number; http: number }>;
export type SyncRefusalCode = keyof typeof SYNC_REFUSALS;
export const SYNC_REFUSAL_CODES = Object.keys(SYNC_REFUSALS) as SyncRefusalCode[];

// ── Handshake (docs/sync.md "The link": both directions proven on every connection) ──────────────
/** initiator → responder: who I am, which key, my fresh nonce, which brain I mean to reach. */
export const HelloFrame = Frame('hello', {
  v: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  from: BrainId(),
  to: BrainId(),
  key: Bytes32(),
  nonce: Bytes32(),
});
/** responder → initiator: who I am, my fresh nonce, and my signature over the transcript (role `responder`). */
export const ChallengeFrame = Frame('challenge', { v: Type.Integer({ minimum: 0, maximum: 1_000_000 }), from: BrainId(), key: Bytes32(), nonce: Bytes32(), sig: Signature() });
/** initiator → responder: my signature over the same transcript (role `initiator`). */
export const ProofFrame = Frame('proof', { sig: Signature() });
/** responder → initiator: both proven; the session starts. */
export const WelcomeFrame = Frame('welcome', {});

// ── Session (after the handshake, both ends are sender and receiver at once) ──────────────────────
/** Most batches a receiver lets a sender have in flight (its receive window). */
export const MAX_SYNC_WINDOW = 64;
/**
 * both ways, once, first: what I have (the other sends me what this lacks), and how many batches I
 * take unacknowledged; the sender keeps within the smaller of its window and this.
 */
export const CursorFrame = Frame('cursor', { cursor: Cursor, window: Type.Integer({ minimum: 1, maximum: MAX_SYNC_WINDOW }) });
/**
 * sender → receiver: the next ops, numbered from 1 in this session, and the sender's cursor when it
 * began reading them (it has at least that, so the receiver never sends any of it back).
 */
export const BatchFrame = Frame('batch', { seq: Seq(), cursor: Cursor, ops: Type.Array(Type.Unknown(), { maxItems: MAX_BATCH_OPS }) });
/** receiver → sender: every batch up to `seq` is applied (durably); `cursor` is what I have now. */
export const AckFrame = Frame('ack', { seq: Seq(), cursor: Cursor });
/** both ways: keepalive after a quiet spell; answered by pong. */
export const PingFrame = Frame('ping', { n: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) });
export const PongFrame = Frame('pong', { n: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) });
/** both ways: a clean close, after the batches in flight were acknowledged (or the drain time passed). */
export const ByeFrame = Frame('bye', { message: Type.Optional(Message()) });
/** both ways: the link is refused or failed, and why; the socket closes with the code's close code. */
export const RefuseFrame = Frame('refuse', { code: Type.Union(SYNC_REFUSAL_CODES.map((c) => Type.Literal(c))), message: Type.Optional(Message()) });

export const SYNC_FRAMES = {
  hello: HelloFrame,
  challenge: ChallengeFrame,
  proof: ProofFrame,
  welcome: WelcomeFrame,
  cursor: CursorFrame,
  batch: BatchFrame,
  ack: AckFrame,
  ping: PingFrame,
  pong: PongFrame,
  bye: ByeFrame,
  refuse: RefuseFrame,
} as const;
export type SyncFrameType = keyof typeof SYNC_FRAMES;
export type SyncFrames = { [K in SyncFrameType]: Static<(typeof SYNC_FRAMES)[K]> };
export type SyncFrame = SyncFrames[SyncFrameType];
export type HelloFrame = SyncFrames['hello'];
export type ChallengeFrame = SyncFrames['challenge'];
export type BatchFrame = SyncFrames['batch'];

// ── Brain pairing (the sync CLI's `pair`, a pairing token of kind `brain`; docs/pairing.md) ──────────────
/**
 * completing brain → minting brain, with the pairing token: my id and public key, and a proof that I
 * hold its private key (a signature over SYNC_PAIR_CONTEXT, the token, my id and my key).
 */
export const SyncPairRequest = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }),
    brain_id: BrainId(),
    public_key: Bytes32(),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    proof: Signature(),
  },
  { additionalProperties: false },
);
export type SyncPairRequest = Static<typeof SyncPairRequest>;

/**
 * minting brain → completing brain: its id and public key, and its proof over SYNC_PAIR_CONTEXT, the
 * token, both ids and both keys. Both ends pin the other's key from here on; nothing secret is left.
 */
export const SyncPairResponse = Type.Object(
  {
    device_id: Type.String({ minLength: 1, maxLength: 64 }),
    brain_id: BrainId(),
    public_key: Bytes32(),
    name: Type.String({ minLength: 1, maxLength: 64 }),
    proof: Signature(),
  },
  { additionalProperties: false },
);
export type SyncPairResponse = Static<typeof SyncPairResponse>;
