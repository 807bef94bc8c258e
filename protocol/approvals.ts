// Approvals of tool calls the permission plane held back (spec 2.6, 2.7, 4.8). Input strings are built
// from protocol/text.ts, so ids carry the same rules as everywhere else (docs/api.md "Input rules").
import { Type, type Static } from '@sinclair/typebox';
import { Id } from './text';
import { APPROVAL_REQUEST_FIELDS } from './session';

/** Bounds of the list's `limit` (spec 4.8): outside them, or not an integer, is a 400, never clamped. */
export const APPROVAL_LIST_LIMIT = { min: 1, max: 500, default: 100 } as const;

export const ApprovalStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('approved'),
  Type.Literal('rejected'),
  Type.Literal('expired'),
  /** Claimed for approval, the tool started, its outcome was never recorded (the brain stopped): never re-run. */
  Type.Literal('unknown'),
]);
export type ApprovalStatus = Static<typeof ApprovalStatus>;

/** Spec 2.6. */
export const ApprovalRequest = Type.Object({ ...APPROVAL_REQUEST_FIELDS, status: ApprovalStatus });
export type ApprovalRequest = Static<typeof ApprovalRequest>;

export const ApprovalList = Type.Object({ count: Type.Integer(), approvals: Type.Array(ApprovalRequest) });
export type ApprovalList = Static<typeof ApprovalList>;

export const ApprovalListQuery = Type.Object(
  {
    session_id: Type.Optional(Id()),
    limit: Type.Integer({ minimum: APPROVAL_LIST_LIMIT.min, maximum: APPROVAL_LIST_LIMIT.max, default: APPROVAL_LIST_LIMIT.default }),
  },
  { additionalProperties: false },
);

export const ApprovalParams = Type.Object({ request_id: Id() });

/** Optional body of approve and reject: the session the person acts from; a different one is a 409. */
export const ApprovalResolveBody = Type.Object({ session_id: Type.Optional(Id()) }, { additionalProperties: false });
export type ApprovalResolveBody = Static<typeof ApprovalResolveBody>;

/** The tool's outcome, as the tool runner gives it to the model. */
export const ApprovalToolResult = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('error')]),
  summary: Type.String(),
  data: Type.Optional(Type.Unknown()),
});
export type ApprovalToolResult = Static<typeof ApprovalToolResult>;

/** Spec 2.7: `summary` and `result` only on approval. */
export const ApprovalResolution = Type.Object({
  success: Type.Boolean(),
  status: Type.Union([Type.Literal('approved'), Type.Literal('rejected')]),
  request_id: Type.String(),
  session_id: Type.String(),
  tool_name: Type.String(),
  summary: Type.Optional(Type.String()),
  result: Type.Optional(ApprovalToolResult),
});
export type ApprovalResolution = Static<typeof ApprovalResolution>;

/** auto runs the call, ask holds it for approval, deny refuses it (docs/approvals.md "The policy"). */
export const ApprovalPolicy = Type.Union([Type.Literal('auto'), Type.Literal('ask'), Type.Literal('deny')]);
export type ApprovalPolicy = Static<typeof ApprovalPolicy>;

/** GET and PUT /api/approvals/policies: the policy in force per safety level, and per tool over its level. */
export const ApprovalPolicies = Type.Object({
  policies: Type.Object({ passive: ApprovalPolicy, active: ApprovalPolicy, privileged: ApprovalPolicy, dangerous: ApprovalPolicy }),
  tools: Type.Record(Type.String(), ApprovalPolicy),
});
export type ApprovalPolicies = Static<typeof ApprovalPolicies>;

/** PUT /api/approvals/policies: one safety level's policy, or one tool's (any other name). */
export const ApprovalPolicyChange = Type.Object(
  {
    target: Type.String({ minLength: 1, maxLength: 64, pattern: '^\\S+$', description: 'A safety level, or a tool name' }),
    policy: ApprovalPolicy,
  },
  { additionalProperties: false },
);
export type ApprovalPolicyChange = Static<typeof ApprovalPolicyChange>;
