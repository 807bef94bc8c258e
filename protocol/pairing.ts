// Pairing and paired devices (spec 4.6, 5.4; node-protocol.md "Pairing a node"). The spec leaves the
// shapes "not shown"; docs/pairing.md describes each one and why. Secrets (pairing tokens, PINs, device
// keys) appear only in the answers that mint them, once.
import { Type, type Static } from '@sinclair/typebox';
import { Id, Line } from './text';

export const PAIR_KIND_NAMES = ['node', 'phone', 'browser', 'brain'] as const;
export const PairKind = Type.Union(PAIR_KIND_NAMES.map((k) => Type.Literal(k)));
export type PairKind = Static<typeof PairKind>;

/** Token lifetime bounds in seconds (docs/pairing.md): default 10 minutes, at most a day. */
export const PAIR_TTL = { min: 60, max: 86_400, default: 600 } as const;
export const NAME_MAX = 64;
/** node-protocol.md node_id. */
export const NODE_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
export const PIN_PATTERN = '^[0-9]{4,8}$';
/** The longest pairing token or device key (mesh/pair-token.ts); longer input is a 400 before any lookup. */
export const SECRET_MAX = 64;

const Name = () => Line({ minLength: 1, maxLength: NAME_MAX, blank: false });
const NodeId = () => Type.String({ pattern: NODE_ID_PATTERN, maxLength: 128 });
const Pin = () => Type.String({ pattern: PIN_PATTERN, description: '4 to 8 digits' });
const Secret = () => Type.String({ minLength: 1, maxLength: SECRET_MAX, pattern: '^[A-Za-z0-9_-]+$' });

const mintFields = {
  kind: Type.Optional(PairKind),
  name: Type.Optional(Name()),
  node_id: Type.Optional(NodeId()),
  ttl_seconds: Type.Optional(Type.Integer({ minimum: PAIR_TTL.min, maximum: PAIR_TTL.max })),
};

/** POST /api/devices/pair. `pin: true` has the brain choose a 6-digit PIN; a string of 4–8 digits sets it. */
export const MintPairBody = Type.Object({ ...mintFields, pin: Type.Optional(Type.Union([Type.Boolean(), Pin()])) }, { additionalProperties: false });
export type MintPairBody = Static<typeof MintPairBody>;

/** GET /api/devices/pair/url and /qr: the same choices as a query (pin=true only: a PIN is never put in a URL). */
export const PairUrlQuery = Type.Object(
  { ...mintFields, pin: Type.Optional(Type.Boolean()), format: Type.Optional(Type.Union([Type.Literal('png'), Type.Literal('svg')])) },
  { additionalProperties: false },
);
export type PairUrlQuery = Static<typeof PairUrlQuery>;

export const TokenState = Type.Union([Type.Literal('unclaimed'), Type.Literal('claimed'), Type.Literal('expired'), Type.Literal('revoked')]);
export type TokenState = Static<typeof TokenState>;

/** A minted token: `token` (and a PIN the brain chose) are shown here only. */
export const MintedPair = Type.Object({
  pair_id: Type.String(),
  token: Type.String(),
  kind: PairKind,
  name: Type.Union([Type.String(), Type.Null()]),
  node_id: Type.Union([Type.String(), Type.Null()]),
  pin_required: Type.Boolean(),
  pin: Type.Optional(Type.String({ description: 'The PIN the brain chose (pin: true); show it on this screen only' })),
  created_at: Type.Number({ description: 'epoch seconds' }),
  expires_at: Type.Number({ description: 'epoch seconds' }),
});
export type MintedPair = Static<typeof MintedPair>;

export const PairPayloadSchema = Type.Object({
  v: Type.Integer(),
  kind: PairKind,
  brain_id: Type.String(),
  token: Type.String(),
  expires_at: Type.Number(),
  pin_required: Type.Boolean(),
  urls: Type.Array(Type.String()),
  mdns: Type.Union([Type.String(), Type.Null()]),
  /** Kind brain: the SHA-256 fingerprint of the minting brain's sync key, which the other brain must find in the answer to pairing. */
  key: Type.Optional(Type.String()),
});

/** GET /api/devices/pair/url: the URL a QR code carries, its fields, and the minted token's id (and PIN). */
export const PairUrlResponse = Type.Object({
  url: Type.String(),
  payload: PairPayloadSchema,
  pair_id: Type.String(),
  pin: Type.Optional(Type.String()),
});
export type PairUrlResponse = Static<typeof PairUrlResponse>;

export const TokenQuery = Type.Object({ token: Secret() }, { additionalProperties: false });
export const PairCheckResponse = Type.Object({ state: TokenState, kind: PairKind, pin_required: Type.Boolean(), pin_verified: Type.Boolean(), expires_at: Type.Number() });
export type PairCheckResponse = Static<typeof PairCheckResponse>;

export const VerifyPinBody = Type.Object({ token: Secret(), pin: Type.String({ minLength: 1, maxLength: 16 }) }, { additionalProperties: false });
export const VerifyPinResponse = Type.Object({ verified: Type.Literal(true) });

export const CompletePairBody = Type.Object(
  { token: Secret(), name: Type.Optional(Name()), node_id: Type.Optional(NodeId()), platform: Type.Optional(Line({ maxLength: 32 })) },
  { additionalProperties: false },
);
export type CompletePairBody = Static<typeof CompletePairBody>;

/** The device's own credential: present it as `Authorization: Bearer <device_key>` (node key for a node). */
export const CompletePairResponse = Type.Object({ device_id: Type.String(), kind: PairKind, name: Type.String(), node_id: Type.Union([Type.String(), Type.Null()]), device_key: Type.String(), brain_id: Type.String() });
export type CompletePairResponse = Static<typeof CompletePairResponse>;

export const PairedDevice = Type.Object({
  device_id: Type.String(),
  kind: PairKind,
  name: Type.String(),
  node_id: Type.Union([Type.String(), Type.Null()]),
  platform: Type.Union([Type.String(), Type.Null()]),
  paired_at: Type.Number(),
  /** The pairing token it was claimed with (null when paired by a code). */
  pair_id: Type.Union([Type.String(), Type.Null()]),
  connections: Type.Integer({ description: 'open WebSockets of this device now' }),
});
export type PairedDevice = Static<typeof PairedDevice>;

export const PendingToken = Type.Object({
  pair_id: Type.String(),
  kind: PairKind,
  name: Type.Union([Type.String(), Type.Null()]),
  state: TokenState,
  pin_required: Type.Boolean(),
  created_at: Type.Number(),
  expires_at: Type.Number(),
});
export type PendingToken = Static<typeof PendingToken>;

export const PairedQuery = Type.Object({ include_unclaimed: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
export const PairedList = Type.Object({ count: Type.Integer(), devices: Type.Array(PairedDevice), unclaimed: Type.Optional(Type.Array(PendingToken)) });
export type PairedList = Static<typeof PairedList>;

export const PruneBody = Type.Object({ older_than_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 315_360_000 })) }, { additionalProperties: false });
export const PruneResponse = Type.Object({ revoked: Type.Integer(), pair_ids: Type.Array(Type.String()) });

export const DeviceParams = Type.Object({ device_id: Id() });
export const RevokeResponse = Type.Object({ id: Type.String(), revoked: Type.Literal(true), connections_closed: Type.Integer() });

export const HandoffBody = Type.Object({ session_id: Id(), from_device_id: Id(), to_device_id: Id() }, { additionalProperties: false });
export const HandoffResponse = Type.Object({ session_id: Type.String(), attached: Type.Integer(), detached: Type.Integer() });

/** node-protocol.md: the code as the node shows it ("NNN NNN") or as six digits. */
const Code = () => Type.String({ pattern: '^[0-9]{3}[ -]?[0-9]{3}$' });
export const AnnounceBody = Type.Object({ code: Code(), node_id: NodeId(), name: Type.Optional(Name()) }, { additionalProperties: true });
export const AnnounceResponse = Type.Object({ status: Type.Literal('pending'), expires_at: Type.Number() });
export const CodeStatusQuery = Type.Object({ code: Code(), node_id: NodeId() }, { additionalProperties: false });
export const CodeStatus = Type.Union([Type.Literal('pending'), Type.Literal('paired'), Type.Literal('expired')]);
export const CodeStatusResponse = Type.Object({ status: CodeStatus, token: Type.Optional(Type.String()), device_id: Type.Optional(Type.String()), expires_at: Type.Number() });
export type CodeStatusResponse = Static<typeof CodeStatusResponse>;
export const CodeClaimBody = Type.Object({ code: Code() }, { additionalProperties: false });
export const CodeClaimResponse = Type.Object({ device_id: Type.String(), node_id: Type.String(), name: Type.String(), kind: Type.Literal('node') });
export type CodeClaimResponse = Static<typeof CodeClaimResponse>;
