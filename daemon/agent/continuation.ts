// The continuation of a turn whose tool call was held for approval (spec 3.1, docs/approvals.md "The
// continuation"): once a person approves or rejects the call, the session's model is handed the
// outcome as the result of the very call it asked for — an assistant tool-call message and its tool
// message — and answers again, so the user sees what happened without asking.
import type { ToolCall } from '../kernel/conversation';
import type { ApprovalEvent } from '../kernel/events';
import type { ToolStatus } from './tools/tool-runner';
import { isOutsideTurn } from '../kernel/permissions';

export type ApprovalResolution = Extract<ApprovalEvent, { type: 'approval_resolved' }>;

/**
 * Approved and rejected calls of a turn are continued; an expired one is only noted (nobody is waiting
 * for it). A call held outside a turn names its origin in the turn id (`taskflow:<flow>:<step>`,
 * kernel/permissions.ts; a skill run's and an MCP call's likewise): its owner carries on, not the conversation.
 */
export const continues = (event: ApprovalResolution): boolean => event.status !== 'expired' && !isOutsideTurn(event.turnId);

/** One line about how a held call ended: the continuation's turn_started text and its place in the conversation. */
export function approvalNote(event: ApprovalResolution): string {
  const call = `${event.tool} (approval request ${event.requestId})`;
  if (event.status === 'rejected') return `[approval] You rejected ${call}; it did not run.`;
  if (event.status === 'expired') return `[approval] ${call} expired without an answer; it did not run.`;
  if (!event.result) return `[approval] You approved ${call}.`;
  return event.result.status === 'ok' ? `[approval] You approved ${call}; it ran: ${event.result.summary}` : `[approval] You approved ${call}; it failed: ${event.result.summary}`;
}

export interface HeldOutcome {
  /** The call as the model asked for it; its id is the approval request's id. */
  call: ToolCall;
  status: ToolStatus;
  summary: string;
  data?: unknown;
}

/** What the model is told the held call returned. */
export function heldOutcome(event: ApprovalResolution): HeldOutcome {
  const call: ToolCall = { id: event.requestId, name: event.tool, arguments: event.args };
  if (event.status === 'approved' && event.result) {
    return { call, status: event.result.status, summary: event.result.summary, ...(event.result.data === undefined ? {} : { data: event.result.data }) };
  }
  if (event.status === 'approved') return { call, status: 'ok', summary: `the user approved this call (approval request ${event.requestId}) and it ran` };
  const why = event.status === 'rejected' ? 'the user rejected this call' : 'nobody approved this call in time';
  return { call, status: 'denied', summary: `${why} (approval request ${event.requestId}); it did not run. Do not try it again unless the user asks.` };
}
