// The skill manifest (issue 16 "Skills"; docs/skills.md "The manifest"): `manifest.json` at the root
// of a skill directory. It names the JavaScript entry the sandbox runs, the params a run takes (a JSON
// schema object), what the skill may reach (hosts and tools) and what starts it.
import { Type, type Static } from '@sinclair/typebox';

/** Lower kebab case: `unit-convert`. */
export const SKILL_ID_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';
/** Semantic Versioning 2.0.0 (semver.org), pre-release and build metadata included. */
export const SEMVER_PATTERN = '^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$';
/** A plain .js file name inside the skill directory: no folder, no leading dot. */
export const ENTRY_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]*\\.js$';
/** A file of a skill: a plain name right inside its directory (no folder, no leading dot). */
export const SKILL_FILE_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]*$';
export const MAX_SKILL_FILES = 32;
/** A hostname, or `*.` and a domain for every name below it. */
export const HOST_PATTERN = '^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\\.?$|^[0-9a-fA-F:.]+$';

export const SkillNetworkPermission = Type.Object(
  {
    /** Hosts a skill may reach: `api.example.com` exactly, or `*.example.com` for names below it. */
    allow: Type.Array(Type.String({ pattern: HOST_PATTERN, maxLength: 253 }), { maxItems: 64 }),
    /** Loopback, link-local and private addresses may be reached (default false). */
    private: Type.Optional(Type.Boolean()),
    /** Plain http:// may be used (default false: https only). */
    http: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const SkillPermissions = Type.Object(
  {
    network: SkillNetworkPermission,
    /** Tools the skill may call with call_tool; each still goes through the permission plane. */
    tools: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 64 }),
  },
  { additionalProperties: false },
);

export const SkillTrigger = Type.Union([
  Type.Object({ type: Type.Literal('manual') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('schedule'), cron: Type.String({ minLength: 9, maxLength: 120 }) }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('schedule'), every_seconds: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('event'), event: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
]);
export type SkillTrigger = Static<typeof SkillTrigger>;

export const SkillManifest = Type.Object(
  {
    /** At most 58 characters, so the skill's tool name `skill_<id>` fits the registry's 64. */
    id: Type.String({ pattern: SKILL_ID_PATTERN, maxLength: 58 }),
    name: Type.String({ minLength: 1, maxLength: 120 }),
    version: Type.String({ pattern: SEMVER_PATTERN, maxLength: 64 }),
    description: Type.String({ maxLength: 2000 }),
    entry: Type.String({ pattern: ENTRY_PATTERN, maxLength: 128 }),
    /** The JSON schema of a run's params: an object schema, so get_param(name) has names to read. */
    params: Type.Object({ type: Type.Literal('object') }, { additionalProperties: true }),
    permissions: SkillPermissions,
    triggers: Type.Array(SkillTrigger, { minItems: 1, maxItems: 16 }),
    /**
     * The hex SHA-256 of every file of the skill besides manifest.json and manifest.signed.json, the
     * entry included. Required for a signed skill: the signature covers the manifest, and through these
     * digests the code (docs/skills.md "Signing a skill").
     */
    files: Type.Optional(Type.Record(Type.String({ pattern: SKILL_FILE_PATTERN, maxLength: 128 }), Type.String({ pattern: '^[0-9a-f]{64}$' }), { maxProperties: MAX_SKILL_FILES })),
  },
  { additionalProperties: false },
);
export type SkillManifest = Static<typeof SkillManifest>;

/** Skill status (spec 2.8 observes `active`; docs/skills.md "Status"): running on triggers and as a tool, turned off by the user, or broken on disk. */
export const SKILL_STATUSES = ['active', 'disabled', 'error'] as const;
export type SkillStatus = (typeof SKILL_STATUSES)[number];

/** Spec 2.8. */
export const SkillListItem = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    version: Type.String(),
    status: Type.Union(SKILL_STATUSES.map((s) => Type.Literal(s))),
  },
  { additionalProperties: false },
);
export type SkillListItem = Static<typeof SkillListItem>;
export const SkillList = Type.Object({ skills: Type.Array(SkillListItem) }, { additionalProperties: false });
export type SkillList = Static<typeof SkillList>;

/** Why the sandbox stopped a run (spec 4.12 svc_sandbox_kills_total{reason}). */
export const SKILL_KILL_REASONS = ['timeout', 'memory', 'error', 'policy'] as const;

/** How a skill run ended (a run outcome as the API and CLI report it). */
export const SkillRunView = Type.Object(
  {
    run_id: Type.String(),
    trigger: Type.String(),
    started_at: Type.Number(),
    /** ok; killed (kill says why); held: a tool call waits for approval request_id. */
    status: Type.Union([Type.Literal('ok'), Type.Literal('killed'), Type.Literal('held')]),
    result: Type.Optional(Type.Unknown()),
    kill: Type.Optional(Type.Union(SKILL_KILL_REASONS.map((r) => Type.Literal(r)))),
    message: Type.Optional(Type.String()),
    request_id: Type.Optional(Type.String()),
    logs: Type.Optional(Type.Array(Type.String())),
    duration_ms: Type.Number(),
  },
  { additionalProperties: false },
);
export type SkillRunView = Static<typeof SkillRunView>;

/** GET /api/skills/:id (spec 4.3: the manifest and status). */
export const SkillDetail = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    version: Type.String(),
    status: Type.Union(SKILL_STATUSES.map((s) => Type.Literal(s))),
    manifest: Type.Unknown(),
    /** builtin (ships with svc), path or url. */
    source: Type.String(),
    /** The key id of the publisher whose signature was verified; null for builtin and unsigned skills. */
    signed_by: Type.Union([Type.String(), Type.Null()]),
    unsigned: Type.Boolean(),
    /** Why the status is error. */
    error: Type.Union([Type.String(), Type.Null()]),
    /** The tool the agent calls it by. */
    tool: Type.String(),
    installed_at: Type.Number(),
    recent_runs: Type.Array(SkillRunView),
  },
  { additionalProperties: false },
);
export type SkillDetail = Static<typeof SkillDetail>;

export const SkillIdParams = Type.Object({ id: Type.String({ pattern: SKILL_ID_PATTERN, maxLength: 58 }) }, { additionalProperties: false });

/** POST /api/skills/install: exactly one of path and url. */
export const SkillInstallBody = Type.Object(
  {
    /** An absolute path on the brain's machine: a skill directory or a .tar.gz of one. */
    path: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    /** A .tar.gz of a skill directory over https (http only to loopback). */
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    /** The archive's expected hex SHA-256 (a registry download gives it). */
    sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
    /** The archive's detached signature (signing/detached.ts: {alg, sha256, key_id, sig}), checked against the key pinned for its key_id. */
    signature: Type.Optional(Type.Unknown()),
    /** Admit a skill without manifest.signed.json; audited as unsigned_install. */
    allow_unsigned: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type SkillInstallBody = Static<typeof SkillInstallBody>;

export const SkillInstallResult = Type.Object(
  {
    skill: SkillListItem,
    signed_by: Type.Union([Type.String(), Type.Null()]),
    unsigned: Type.Boolean(),
    /** The version this install replaced, when it was an upgrade. */
    upgraded_from: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
export type SkillInstallResult = Static<typeof SkillInstallResult>;

export const SkillExecuteBody = Type.Object({ params: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }, { additionalProperties: false });
export type SkillExecuteBody = Static<typeof SkillExecuteBody>;

export const SkillRemoved = Type.Object({ id: Type.String(), removed: Type.Literal(true) }, { additionalProperties: false });
