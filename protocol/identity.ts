// /api/identity (spec 4.5, 2.11). USER.md and SOUL.md are Markdown files in $SVC_HOME; the API
// carries their text plus a revision (STYLE.md 12: a stale PUT is a 409, not a silent overwrite).
// Shapes other than the twin question and answer are "not shown" in the spec: docs/protocol.md.
import { Type, type Static } from '@sinclair/typebox';
import { Line, Text } from './text';

export const MAX_IDENTITY_BYTES = 64 * 1024;

const Revision = Type.String({ description: 'sha256 prefix of the content; send it back on PUT to refuse a stale write' });

export const IdentityFile = Type.Object({
  content: Type.String(),
  revision: Revision,
  updated_at: Type.String({ format: 'date-time' }),
});
export type IdentityFile = Static<typeof IdentityFile>;

export const IdentityPut = Type.Object(
  { content: Text({ maxLength: MAX_IDENTITY_BYTES }), revision: Type.Optional(Line({ maxLength: 64, description: Revision.description })) },
  { additionalProperties: false },
);
export type IdentityPut = Static<typeof IdentityPut>;

/** SOUL.md read as the agent's persona: the sections `svc identity` prints (spec 4.14). */
export const Soul = Type.Intersect([
  IdentityFile,
  Type.Object({
    name: Type.String(),
    personality: Type.String(),
    rules: Type.Array(Type.String()),
    style: Type.String(),
  }),
]);
export type Soul = Static<typeof Soul>;

export const TwinQuestion = Type.Object({ question: Text({ minLength: 1, maxLength: 2000, blank: false }) }, { additionalProperties: false });
export type TwinQuestion = Static<typeof TwinQuestion>;

/** Spec 2.11, plus the evidence the answer rests on. */
export const TwinAnswer = Type.Object({
  answer: Type.String(),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  evidence: Type.Array(Type.Object({ source: Type.String({ description: 'USER.md or a memory id' }), text: Type.String() })),
});
export type TwinAnswer = Static<typeof TwinAnswer>;

/** GET /api/identity/twin: who the twin speaks for and how much it has to go on. */
export const TwinProfile = Type.Object({
  name: Type.Union([Type.String(), Type.Null()], { description: 'The user name from USER.md, when set' }),
  facts: Type.Integer({ minimum: 0, description: 'Statements in USER.md the twin can draw on' }),
  memory: Type.Boolean({ description: 'Whether memory search is available to the twin' }),
  ready: Type.Boolean({ description: 'false while USER.md is still the empty template' }),
});
export type TwinProfile = Static<typeof TwinProfile>;

/**
 * PATCH /api/identity/soul: set persona fields; the brain rewrites SOUL.md's sections (svc setup).
 * Every field is one line (SOUL.md keeps each as one paragraph or bullet, and a line break could start a
 * section of its own); a value that begins like Markdown block syntax (`#`, `>`, `-`, …) is escaped in
 * the file (daemon/identity/identity-text.ts).
 */
export const SoulPatch = Type.Object(
  {
    name: Type.Optional(Line({ minLength: 1, maxLength: 80, blank: false })),
    personality: Type.Optional(Line({ minLength: 1, maxLength: 2000, blank: false })),
    rules: Type.Optional(Type.Array(Line({ minLength: 1, maxLength: 500, blank: false }), { maxItems: 50 })),
    style: Type.Optional(Line({ minLength: 1, maxLength: 2000, blank: false })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type SoulPatch = Static<typeof SoulPatch>;

/** PATCH /api/identity/user: set the `Name:` line of USER.md, leaving the rest as the user wrote it. */
export const UserPatch = Type.Object({ name: Line({ minLength: 1, maxLength: 120, blank: false }) }, { additionalProperties: false });
export type UserPatch = Static<typeof UserPatch>;
