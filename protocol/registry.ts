// The marketplace registry's wire contract (issue 16 "Marketplace registry", spec 3.3, 4.14;
// docs/registry.md): the daemon manifest a published daemon carries, what a publish sends, and what the
// registry answers about items, their versions and the reviewers' queue. The registry's HTTP API lives
// under /registry/v1 (REGISTRY_PREFIX), on a brain with the registry capability enabled or on
// `svc registry serve`; the brain's own install of a published daemon is /api/daemons.
import { Type, type Static } from '@sinclair/typebox';
import { NODE_ID_PATTERN } from './node';
import { SEMVER_PATTERN } from './skills';
import { B64_32_PATTERN, DetachedSignature, KEY_ID_PATTERN, SHA256_HEX_PATTERN } from './signing';

export const REGISTRY_PREFIX = '/registry/v1';

/** A relative path inside a daemon bundle: `/`-separated plain names, no leading dot, no `..`. */
export const BUNDLE_PATH_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$';

/**
 * A daemon's manifest.json: the program a node-agent runs for the node `node_id`. `brand.name` is
 * shown to people and never used to find the item (spec 4.14: it is published under node_id).
 */
export const DaemonManifest = Type.Object(
  {
    node_id: Type.String({ pattern: NODE_ID_PATTERN, maxLength: 128 }),
    version: Type.String({ pattern: SEMVER_PATTERN, maxLength: 64 }),
    entry: Type.String({ pattern: BUNDLE_PATH_PATTERN, maxLength: 240 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    brand: Type.Optional(Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })) }, { additionalProperties: true })),
  },
  { additionalProperties: true },
);
export type DaemonManifest = Static<typeof DaemonManifest>;

export const ITEM_KINDS = ['skill', 'daemon'] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];
const Kind = Type.Union(ITEM_KINDS.map((k) => Type.Literal(k)));

/** The states of one published version (docs/registry.md "States"; daemon/registry/item-states.ts). */
export const VERSION_STATES = ['submitted', 'published', 'superseded', 'rejected', 'withdrawn'] as const;
export type VersionState = (typeof VERSION_STATES)[number];
const State = Type.Union(VERSION_STATES.map((s) => Type.Literal(s)));
/** Spec 3.3: a submission is private; only a reviewed and published version (or one it superseded) is public. */
export const Visibility = Type.Union([Type.Literal('private'), Type.Literal('public')]);
export type Visibility = Static<typeof Visibility>;

/** POST /registry/v1/items: the archive (base64 of the .tar.gz), its detached signature and the publisher's public key. */
export const PublishBody = Type.Object(
  {
    kind: Kind,
    archive: Type.String({ minLength: 4, contentEncoding: 'base64' }),
    signature: DetachedSignature,
    public_key: Type.String({ pattern: B64_32_PATTERN }),
  },
  { additionalProperties: false },
);
export type PublishBody = Static<typeof PublishBody>;

/** One version of an item, as the registry shows it. Reviewers see every version; others only public ones. */
export const VersionView = Type.Object({
  submission_id: Type.String({ format: 'uuid' }),
  version: Type.String(),
  state: State,
  visibility: Visibility,
  sha256: Type.String({ pattern: SHA256_HEX_PATTERN }),
  size: Type.Integer({ minimum: 0 }),
  key_id: Type.String({ pattern: KEY_ID_PATTERN }),
  public_key: Type.String({ pattern: B64_32_PATTERN }),
  signature: DetachedSignature,
  /** The reviewer's reason for a rejection, the registry's for an automatic one; else null. */
  reason: Type.Union([Type.String(), Type.Null()]),
  submitted_at: Type.String(),
  reviewed_at: Type.Union([Type.String(), Type.Null()]),
  /** The path of the tarball under the registry's URL, while the version is public; else null. */
  download: Type.Union([Type.String(), Type.Null()]),
});
export type VersionView = Static<typeof VersionView>;

/** What a publish answers (201): where the submission landed. */
export const PublishResult = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The item UUID: the same for every version of this name' }),
  kind: Kind,
  name: Type.String(),
  version: Type.String(),
  submission_id: Type.String({ format: 'uuid' }),
  state: State,
  visibility: Visibility,
});
export type PublishResult = Static<typeof PublishResult>;

/** An item in a listing: its current published version. */
export const ItemSummary = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: Kind,
  name: Type.String(),
  display_name: Type.String(),
  description: Type.String(),
  version: Type.String(),
  key_id: Type.String(),
});
export type ItemSummary = Static<typeof ItemSummary>;

export const ItemList = Type.Object({ items: Type.Array(ItemSummary) });
export type ItemList = Static<typeof ItemList>;

export const ItemListQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 200 })),
  kind: Type.Optional(Kind),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
});

/**
 * GET /registry/v1/items/:ref. `current` is the published version (null while none is); `installable`
 * says whether anything can be downloaded. `versions` are the public ones.
 */
export const ItemDetail = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: Kind,
  name: Type.String(),
  display_name: Type.String(),
  description: Type.String(),
  /** The publisher key the name is bound to (its first approved version's), or null before any approval. */
  key_id: Type.Union([Type.String(), Type.Null()]),
  installable: Type.Boolean(),
  current: Type.Union([VersionView, Type.Null()]),
  versions: Type.Array(VersionView),
  /** The manifest of the current version (null while none is published). */
  manifest: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
});
export type ItemDetail = Static<typeof ItemDetail>;

/** :ref is an item UUID or the name it is published under. */
export const ItemParams = Type.Object({ ref: Type.String({ minLength: 1, maxLength: 128 }) });
export const DownloadQuery = Type.Object({ version: Type.Optional(Type.String({ pattern: SEMVER_PATTERN, maxLength: 64 })) });

/** A submission in the reviewers' queue (GET /registry/v1/review). */
export const Submission = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The item UUID' }),
  kind: Kind,
  name: Type.String(),
  display_name: Type.String(),
  description: Type.String(),
  bound_key_id: Type.Union([Type.String(), Type.Null()]),
  manifest: Type.Record(Type.String(), Type.Unknown()),
  ...VersionView.properties,
});
export type Submission = Static<typeof Submission>;

export const SubmissionList = Type.Object({ submissions: Type.Array(Submission) });
export type SubmissionList = Static<typeof SubmissionList>;

export const ReviewListQuery = Type.Object({ state: Type.Optional(State) });

/** POST /registry/v1/review/:ref: :ref is a submission id, or an item UUID or name with exactly one submission waiting. */
export const ReviewBody = Type.Object(
  {
    decision: Type.Union([Type.Literal('approve'), Type.Literal('reject')]),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
  },
  { additionalProperties: false },
);
export type ReviewBody = Static<typeof ReviewBody>;

/**
 * POST /registry/v1/items/:ref/withdraw: the publisher takes a version back. `signature` is Ed25519 by
 * the key the item is bound to over `svc-registry-withdraw-v1\n<item UUID>\n<version>`.
 */
export const WithdrawBody = Type.Object(
  {
    version: Type.String({ pattern: SEMVER_PATTERN, maxLength: 64 }),
    key_id: Type.String({ pattern: KEY_ID_PATTERN }),
    signature: Type.String({ minLength: 80, maxLength: 100 }),
  },
  { additionalProperties: false },
);
export type WithdrawBody = Static<typeof WithdrawBody>;

/**
 * POST /api/daemons/install: the brain fetches a published daemon from a registry (docs/registry.md
 * "Installing"); the same fields as a skill's install from a URL (protocol/skills.ts SkillInstallBody).
 */
export const DaemonInstallBody = Type.Object(
  {
    url: Type.String({ minLength: 8, maxLength: 2048 }),
    sha256: Type.String({ pattern: SHA256_HEX_PATTERN }),
    signature: DetachedSignature,
  },
  { additionalProperties: false },
);
export type DaemonInstallBody = Static<typeof DaemonInstallBody>;

/** An installed daemon: stored by the brain for the node-agent that registers with `node_id`. */
export const InstalledDaemon = Type.Object({
  node_id: Type.String(),
  version: Type.String(),
  entry: Type.String(),
  display_name: Type.String(),
  sha256: Type.String(),
  key_id: Type.String(),
  source: Type.String(),
  installed_at: Type.String(),
  /** Where the files are, under the brain's home. */
  path: Type.String(),
});
export type InstalledDaemon = Static<typeof InstalledDaemon>;

export const InstalledDaemonList = Type.Object({ daemons: Type.Array(InstalledDaemon) });
