// The command lifecycle (spec 3.4; protocol/hardware.ts COMMAND_STATUSES; docs/hardware.md "Commands"):
// which status may follow which. The command store refuses anything else, so no sequence of calls,
// approvals and crashes can write a history the table does not allow
// (test/daemon/hardware/command-machine.test.ts drives it with random event sequences).
//
//   from                   to
//   queued               → sent (issued to the node) | pending_confirmation (held by approvals)
//                          | denied (opt-in tier off, rate limit, not granted) | failed (device offline)
//                          | cancelled
//   pending_confirmation → queued (approved: the approved call continues the same command)
//                          | denied (rejected) | cancelled (expired, or approved but never run)
//   sent                 → sent (re-issued by the verify loop: `attempts` counts the issues)
//                          | succeeded | failed (the node said no, or disconnected) | timeout
//                          | cancelled (the brain stops)
//   succeeded, failed, timeout, denied, cancelled: final.
// A brain that crashes leaves `queued` and `sent` commands behind: at start they become failed
// ("brain restarted"), which the table allows; pending_confirmation survives (its approval does too).
import type { CommandStatus } from '../../../protocol/hardware';

export const COMMAND_TRANSITIONS: Readonly<Record<CommandStatus, readonly CommandStatus[]>> = {
  queued: ['sent', 'pending_confirmation', 'denied', 'failed', 'cancelled'],
  pending_confirmation: ['queued', 'denied', 'cancelled'],
  sent: ['sent', 'succeeded', 'failed', 'timeout', 'cancelled'],
  succeeded: [],
  failed: [],
  timeout: [],
  denied: [],
  cancelled: [],
};

export const canCommand = (from: CommandStatus, to: CommandStatus): boolean => COMMAND_TRANSITIONS[from].includes(to);
export const isFinal = (status: CommandStatus): boolean => COMMAND_TRANSITIONS[status].length === 0;

/** One entry of a command's history; `at` in epoch ms. */
export interface CommandStep {
  status: CommandStatus;
  at: number;
  detail: string | null;
}

export class CommandTransitionError extends Error {
  constructor(
    readonly commandId: string,
    readonly from: CommandStatus,
    readonly to: CommandStatus,
  ) {
    super(`command ${commandId}: a ${from} command cannot become ${to}`);
    this.name = 'CommandTransitionError';
  }
}

/**
 * The history with `to` appended, or a CommandTransitionError when the table refuses it. Its time is
 * never before the previous entry's (a clock stepped back keeps the history ordered).
 */
export function advance(commandId: string, history: readonly CommandStep[], to: CommandStatus, at: number, detail: string | null): CommandStep[] {
  const last = history[history.length - 1];
  if (last && !canCommand(last.status, to)) throw new CommandTransitionError(commandId, last.status, to);
  return [...history, { status: to, at: last ? Math.max(last.at, at) : at, detail }];
}
