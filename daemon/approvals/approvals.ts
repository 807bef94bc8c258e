// The approvals service: the permission hook every tool call passes (policy auto → allow, deny →
// deny, ask → a durable pending request), and approve/reject, which run the held call once or never.
// It keeps the svc_supervisor_approval_queue gauge at the pending count and announces on the bus.
import type { Logger } from 'pino';
import type { Clock } from '../kernel/capability';
import type { EventBus } from '../kernel/event-bus';
import type { ApprovedToolResult, BrainEvent } from '../kernel/events';
import type { GaugeHandle } from '../kernel/metrics';
import type { PermissionDecision, PermissionHook, PermissionRequest } from '../kernel/permissions';
import type { ToolRegistry } from '../kernel/tool-registry';
import { ToolFailure } from '../kernel/tool';
import { AppError } from '../kernel/errors';
import type { ApprovalRequest, ApprovalResolution, ApprovalToolResult } from '../../protocol/approvals';
import { policyFor, type ApprovalSettings } from './approval-policy';
import type { ApprovalQueue, StoredRequest } from './approval-queue';

export interface ApprovalsDeps {
  queue: ApprovalQueue;
  settings: Pick<ApprovalSettings, 'policies' | 'tools'>;
  tools: ToolRegistry;
  bus: EventBus<BrainEvent>;
  gauge: GaugeHandle;
  clock: Clock;
  logger: Logger;
}

export class Approvals implements PermissionHook {
  constructor(private readonly deps: ApprovalsDeps) {}

  async check(request: PermissionRequest): Promise<PermissionDecision> {
    const policy = policyFor(this.deps.settings, request.tool, request.safety);
    if (policy === 'auto') return { verdict: 'allow' };
    if (policy === 'deny') return { verdict: 'deny', reason: `${request.tool} is a ${request.safety} tool and the approvals policy refuses it; the call was refused` };
    const held = await this.deps.queue.add({ sessionId: request.sessionId, turnId: request.turnId, tool: request.tool, args: request.args, safety: request.safety });
    this.changed();
    this.deps.bus.emit({ type: 'approval_requested', category: 'approval', priority: 'high', requestId: held.request_id, sessionId: held.session_id, turnId: held.turn_id, tool: held.tool_name, safety: held.safety_level, args: held.args, createdAt: held.created_at, at: this.deps.clock.now() });
    return { verdict: 'pending', requestId: held.request_id, reason: `${request.tool} needs your approval (request ${held.request_id}); it runs once you approve it` };
  }

  /** Marks requests past the TTL expired (at start and before each list). */
  async expire(): Promise<void> {
    const expired = await this.deps.queue.expire();
    if (expired.length === 0) return;
    for (const id of expired) {
      const request = this.deps.queue.get(id);
      if (request) this.resolved(request, 'expired');
    }
    this.changed();
  }

  /** The pending list (spec 4.8), expired requests marked first. */
  async list(filter: { sessionId?: string; limit: number }): Promise<ApprovalRequest[]> {
    await this.expire();
    return this.deps.queue.list(filter).map(({ turn_id: _turn, ...request }) => request);
  }

  async approve(requestId: string, givenSession: string | undefined): Promise<ApprovalResolution> {
    // Expiry first, as for a listing: an expired request is a 404 (not a 503) and is announced once.
    await this.expire();
    const pending = this.deps.queue.get(requestId);
    // A tool that left the registry (its capability stopped) leaves the request pending: 503, try later.
    if (pending?.status === 'pending' && !this.deps.tools.get(pending.tool_name)) {
      throw new AppError('UNAVAILABLE', `the tool ${pending.tool_name} is not available now; the request stays pending`, { tool: pending.tool_name });
    }
    const request = await this.deps.queue.claim(requestId, 'unknown', givenSession);
    this.changed();
    const result = await this.run(request);
    await this.deps.queue.finish(requestId);
    this.resolved(request, 'approved', result);
    return { success: true, status: 'approved', request_id: request.request_id, session_id: request.session_id, tool_name: request.tool_name, summary: result.summary, result };
  }

  async reject(requestId: string, givenSession: string | undefined): Promise<ApprovalResolution> {
    await this.expire();
    const request = await this.deps.queue.claim(requestId, 'rejected', givenSession);
    this.changed();
    this.resolved(request, 'rejected');
    return { success: true, status: 'rejected', request_id: request.request_id, session_id: request.session_id, tool_name: request.tool_name };
  }

  /** Sets the gauge to the pending count: after every change and at start. */
  changed(): void {
    this.deps.gauge.set(this.deps.queue.pendingCount());
  }

  private async run(request: StoredRequest): Promise<ApprovalToolResult> {
    const tool = this.deps.tools.get(request.tool_name);
    if (!tool) return { status: 'error', summary: `there is no tool named ${request.tool_name} any more` };
    const ctx = { sessionId: request.session_id, turnId: request.turn_id, specialist: 'general' as const, signal: new AbortController().signal };
    try {
      const outcome = await tool.run(request.args, ctx);
      return { status: 'ok', summary: outcome.summary, ...(outcome.data === undefined ? {} : { data: outcome.data }) };
    } catch (err) {
      if (err instanceof ToolFailure) return { status: 'error', summary: err.message };
      this.deps.logger.error({ err, tool: request.tool_name, request_id: request.request_id }, 'approved tool failed');
      return { status: 'error', summary: `${request.tool_name} failed: ${(err as Error).message}` };
    }
  }

  private resolved(request: StoredRequest, status: 'approved' | 'rejected' | 'expired', result?: ApprovedToolResult): void {
    this.deps.bus.emit({ type: 'approval_resolved', requestId: request.request_id, sessionId: request.session_id, turnId: request.turn_id, tool: request.tool_name, args: request.args, status, ...(result ? { result } : {}), at: this.deps.clock.now() });
  }
}
