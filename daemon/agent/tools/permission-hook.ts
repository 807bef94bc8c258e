// The permission plane's single entry point (ARCHITECTURE.md "Data flow of one turn"): every tool
// call passes through one PermissionHook before it runs. Today's hook allows passive and active tools
// and refuses privileged and dangerous ones, because approvals do not exist yet. The approvals issue
// replaces it with a hook that answers `pending` and creates an approval request (spec 2.6, 3.1);
// the tool runner already handles that verdict, so nothing else changes.
import type { SafetyLevel } from '../../kernel/tool';
import { SAFETY_ORDER } from '../../kernel/tool';

export interface PermissionRequest {
  tool: string;
  safety: SafetyLevel;
  args: Record<string, unknown>;
  sessionId: string;
  turnId: string;
}

export type PermissionDecision =
  | { verdict: 'allow' }
  | { verdict: 'deny'; reason: string }
  /** Blocked until a person approves: spec 3.1 — the request appears in the approvals list. */
  | { verdict: 'pending'; requestId: string; reason: string };

export interface PermissionHook {
  check(request: PermissionRequest): Promise<PermissionDecision> | PermissionDecision;
}

/** Allows up to `maxAutoLevel` (default active); refuses the rest with a message the user can act on. */
export class StaticPermissionHook implements PermissionHook {
  constructor(private readonly maxAutoLevel: SafetyLevel = 'active') {}

  check(request: PermissionRequest): PermissionDecision {
    if (SAFETY_ORDER[request.safety] <= SAFETY_ORDER[this.maxAutoLevel]) return { verdict: 'allow' };
    return {
      verdict: 'deny',
      reason: `${request.tool} is a ${request.safety} tool and needs your approval, but approvals are not available in this version of svc; the call was refused`,
    };
  }
}
