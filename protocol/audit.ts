// The audit log over HTTP (GET /api/audit; docs/security.md "The audit log"): decisions a person made
// that weakened a safeguard, such as installing an unsigned skill or app (spec 4.1 rule 2, 5.1 rule 4:
// tag unsigned_install). Entries are never changed or removed through the API.
import { Type, type Static } from '@sinclair/typebox';

/** Lower snake case: `unsigned_install`. */
export const AUDIT_TAG_PATTERN = '^[a-z][a-z0-9_]{0,63}$';

export const AuditEntry = Type.Object(
  {
    id: Type.Integer(),
    /** Epoch seconds with fraction, like approvals' created_at. */
    at: Type.Number(),
    tag: Type.String(),
    /** Who asked: `admin`, `device:<id>`… (daemon/auth/principal.ts principalId). */
    actor: Type.String(),
    /** What it was about: `skill:<id>@<version>`, `app:<id>`… */
    subject: Type.String(),
    details: Type.Unknown(),
  },
  { additionalProperties: false },
);
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditQuery = Type.Object(
  {
    tag: Type.Optional(Type.String({ pattern: AUDIT_TAG_PATTERN })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  },
  { additionalProperties: false },
);
export const AuditList = Type.Object({ entries: Type.Array(AuditEntry) }, { additionalProperties: false });
