// Commands held by the approvals capability (spec 3.4 pending_confirmation; docs/hardware.md
// "Confirmation"). The permission plane holds a call before the tool runs, so the device layer learns
// of it from the bus: approval_requested for a hwdev_ tool records a command in pending_confirmation.
// An approved call is run by the approvals capability with the same tool, turn and arguments: that
// run continues the same command (→ queued → sent → …). approval_resolved then ends a command still
// waiting: rejected → denied, expired → cancelled, approved but never run (the tool was gone) → cancelled.
import type { ApprovalEvent } from '../../kernel/events';
import type { Command, CommandStore } from './command-store';

type Requested = Extract<ApprovalEvent, { type: 'approval_requested' }>;
type Resolved = Extract<ApprovalEvent, { type: 'approval_resolved' }>;

/** JSON with object keys sorted, so equal arguments give equal keys whatever their order. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const keyOf = (tool: string | null, turnId: string | null, params: Record<string, unknown>): string => `${tool ?? ''}\u0000${turnId ?? ''}\u0000${stableJson(params)}`;

export class PendingConfirmations {
  private readonly byKey = new Map<string, Command[]>();
  private readonly byApproval = new Map<string, Command>();

  constructor(private readonly commands: CommandStore) {}

  /** Commands still waiting after a restart (their approvals survive it too). */
  restore(waiting: readonly Command[]): void {
    for (const command of waiting) this.track(command);
  }

  /** approval_requested for one of this capability's tools: a command waiting for confirmation. */
  requested(event: Requested, target: { deviceId: string; nodeId: string; action: string; params: Record<string, unknown> }): Promise<void> {
    const { command, written } = this.commands.create(
      { deviceId: target.deviceId, nodeId: target.nodeId, action: target.action, tool: event.tool, params: target.params, turnId: event.turnId, approvalId: event.requestId },
      'pending_confirmation',
      `approval ${event.requestId}`,
    );
    this.track(command);
    return written;
  }

  /** The waiting command this call continues (same tool, turn and arguments), taken off the list. */
  take(tool: string, turnId: string, params: Record<string, unknown>): Command | undefined {
    const key = keyOf(tool, turnId, params);
    const list = this.byKey.get(key);
    const command = list?.shift();
    if (list?.length === 0) this.byKey.delete(key);
    if (command?.approvalId) this.byApproval.delete(command.approvalId);
    return command?.status === 'pending_confirmation' ? command : undefined;
  }

  /** approval_resolved: ends a command that is still waiting. */
  async resolved(event: Resolved): Promise<void> {
    const command = this.byApproval.get(event.requestId);
    if (!command) return;
    this.byApproval.delete(event.requestId);
    const key = keyOf(command.tool, command.turnId, command.params);
    const rest = (this.byKey.get(key) ?? []).filter((c) => c !== command);
    if (rest.length > 0) this.byKey.set(key, rest);
    else this.byKey.delete(key);
    if (command.status !== 'pending_confirmation') return;
    if (event.status === 'rejected') await this.commands.transition(command, 'denied', 'rejected by the user', { error: 'rejected by the user' });
    else if (event.status === 'expired') await this.commands.transition(command, 'cancelled', 'approval expired', { error: 'approval expired' });
    else await this.commands.transition(command, 'cancelled', 'approved, but the call did not reach the device', { error: 'approved, but the call did not reach the device' });
  }

  private track(command: Command): void {
    const key = keyOf(command.tool, command.turnId, command.params);
    const list = this.byKey.get(key);
    if (list) list.push(command);
    else this.byKey.set(key, [command]);
    if (command.approvalId) this.byApproval.set(command.approvalId, command);
  }
}
