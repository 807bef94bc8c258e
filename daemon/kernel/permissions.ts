// The permission plane's single entry point (ARCHITECTURE.md "Data flow of one turn"): every tool
// call passes through one PermissionHook before it runs. The brain starts with the static hook
// (passive and active tools allowed, privileged and dangerous refused); a capability that implements
// approvals installs its own through `PermissionPlane.use` (the context's `permissions`), answering
// `pending` with an approval request (spec 2.6, 3.1). The tool runner already handles that verdict.
import { SAFETY_ORDER, type SafetyLevel } from './tool';

export interface PermissionRequest {
  tool: string;
  safety: SafetyLevel;
  args: Record<string, unknown>;
  sessionId: string;
  /**
   * The turn that made the call. A call made outside any turn names its origin instead (outsideTurnId:
   * `taskflow:<flow id>:<step index>`, `skill:<skill id>:<run id>`, `mcp:<client>:<call>`); its approval
   * is not continued by the agent.
   */
  turnId: string;
}

/** Where a tool call made outside a conversation turn comes from. */
export type OutsideTurnOrigin = 'taskflow' | 'skill' | 'mcp';
const OUTSIDE_TURN = /^(taskflow|skill|mcp):/;

/** The turn id of a call made by a TaskFlow step, a skill run or an MCP client, not by a turn of the conversation. */
export const outsideTurnId = (origin: OutsideTurnOrigin, ...parts: (string | number)[]): string => `${origin}:${parts.join(':')}`;
export const taskflowTurnId = (flowId: string, step: number): string => outsideTurnId('taskflow', flowId, step);
/** True for a turn id made by outsideTurnId: nobody's conversation waits on it. */
export const isOutsideTurn = (turnId: string): boolean => OUTSIDE_TURN.test(turnId);

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

/**
 * The hook every tool call goes through, which one capability may replace at start (approvals). The
 * agent holds this object for its whole life; `use` swaps what it delegates to.
 */
export class PermissionPlane implements PermissionHook {
  private hook: PermissionHook;
  private owner: string | null = null;

  constructor(initial: PermissionHook = new StaticPermissionHook()) {
    this.hook = initial;
  }

  /** Installs `hook` as the brain's permission hook; only one capability may own it. */
  use(owner: string, hook: PermissionHook): void {
    if (this.owner !== null && this.owner !== owner) throw new Error(`the permission hook is already owned by ${this.owner}`);
    this.owner = owner;
    this.hook = hook;
  }

  check(request: PermissionRequest): Promise<PermissionDecision> | PermissionDecision {
    return this.hook.check(request);
  }
}
