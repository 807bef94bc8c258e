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
    id: Type.String({ pattern: SKILL_ID_PATTERN, maxLength: 64 }),
    name: Type.String({ minLength: 1, maxLength: 120 }),
    version: Type.String({ pattern: SEMVER_PATTERN, maxLength: 64 }),
    description: Type.String({ maxLength: 2000 }),
    entry: Type.String({ pattern: ENTRY_PATTERN, maxLength: 128 }),
    /** The JSON schema of a run's params: an object schema, so get_param(name) has names to read. */
    params: Type.Object({ type: Type.Literal('object') }, { additionalProperties: true }),
    permissions: SkillPermissions,
    triggers: Type.Array(SkillTrigger, { minItems: 1, maxItems: 16 }),
  },
  { additionalProperties: false },
);
export type SkillManifest = Static<typeof SkillManifest>;
