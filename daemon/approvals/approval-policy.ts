// The safety policy (spec 2.6 leaves levels and policies "not shown"; docs/approvals.md): each safety
// level has a policy, auto, ask or deny, and a tool may override its level's by name. The settings
// section `approvals` is this file's schema.
import { Type, type Static } from '@sinclair/typebox';
import type { SafetyLevel } from '../kernel/tool';

export const Policy = Type.Union([Type.Literal('auto'), Type.Literal('ask'), Type.Literal('deny')]);
export type Policy = Static<typeof Policy>;

const level = (d: Policy, description: string) => Type.Union([Type.Literal('auto'), Type.Literal('ask'), Type.Literal('deny')], { default: d, description });

export const ApprovalSettings = Type.Object(
  {
    ttl_minutes: Type.Integer({ minimum: 1, maximum: 525_600, default: 1440, description: 'A pending request older than this can no longer be approved' }),
    policies: Type.Object(
      {
        passive: level('auto', 'Policy for passive tools'),
        active: level('auto', 'Policy for active tools'),
        privileged: level('ask', 'Policy for privileged tools'),
        dangerous: level('ask', 'Policy for dangerous tools'),
      },
      { additionalProperties: false, default: {}, description: 'Policy per safety level' },
    ),
    tools: Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Policy, { default: {}, description: 'Policy per tool name, over its level' }),
  },
  { additionalProperties: false, default: {}, description: 'Approval of tool calls (docs/approvals.md)' },
);
export type ApprovalSettings = Static<typeof ApprovalSettings>;

/** The policy for one call: the tool's own when set, else its safety level's. */
export function policyFor(settings: Pick<ApprovalSettings, 'policies' | 'tools'>, tool: string, safety: SafetyLevel): Policy {
  return Object.hasOwn(settings.tools, tool) ? settings.tools[tool]! : settings.policies[safety];
}
