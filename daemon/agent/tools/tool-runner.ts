// Runs one tool call the model asked for: offered? → arguments valid? → permission hook → run →
// scrub secrets → bounded result. A tool that refuses by the permission plane (ToolDenied: a path no
// grant covers) is reported `denied` and counted like a policy denial. Whatever happens, the model gets a `tool` message back (a failed
// call is information for the model, not a crash of the turn); bugs inside a tool are logged.
import type { Logger } from 'pino';
import type { ChatMessage, ToolCall } from '../../kernel/conversation';
import type { AgentMetrics } from '../agent-metrics';
import type { SduiComponent } from '../../../protocol/session';
import type { ToolRegistry } from '../../kernel/tool-registry';
import type { PermissionHook } from '../../kernel/permissions';
import type { SecretScrubber } from './secret-scrubber';
import { ToolDenied, ToolFailure, type SafetyLevel, type ToolContext } from '../../kernel/tool';

/** Cap on what one result hands the model (characters of JSON): a tool cannot flood the context. */
export const MAX_RESULT_CHARS = 8_000;

export type ToolStatus = 'ok' | 'error' | 'denied' | 'pending_approval';

export interface ToolRun {
  call: ToolCall;
  safety: SafetyLevel;
  status: ToolStatus;
  summary: string;
  message: Extract<ChatMessage, { role: 'tool' }>;
  ui?: SduiComponent;
  sources: string[];
}

export interface ToolRunnerDeps {
  registry: ToolRegistry;
  permissions: PermissionHook;
  scrubber: SecretScrubber;
  metrics: Pick<AgentMetrics, 'toolDenied'>;
  logger: Logger;
}

export class ToolRunner {
  constructor(private readonly deps: ToolRunnerDeps) {}

  /** `offered` is the tool subset the model was given for this turn (router specialist). */
  async run(call: ToolCall, offered: ReadonlySet<string>, ctx: ToolContext): Promise<ToolRun> {
    const tool = this.deps.registry.get(call.name);
    if (!tool || !offered.has(call.name)) return this.result(call, 'passive', 'error', `there is no tool named ${call.name} here`);
    const problems = this.deps.registry.problems(call.name, call.arguments);
    if (problems.length > 0) return this.result(call, tool.safety, 'error', `invalid arguments for ${call.name}: ${problems.join('; ')}`);

    const decision = await this.deps.permissions.check({ tool: call.name, safety: tool.safety, args: call.arguments, sessionId: ctx.sessionId, turnId: ctx.turnId });
    if (decision.verdict === 'deny') {
      this.deps.metrics.toolDenied(call.name);
      return this.result(call, tool.safety, 'denied', decision.reason);
    }
    if (decision.verdict === 'pending') {
      return this.result(call, tool.safety, 'pending_approval', decision.reason, { approval_request_id: decision.requestId });
    }
    try {
      const outcome = await tool.run(call.arguments, ctx);
      const ui = outcome.ui ? this.deps.scrubber.scrubValue(outcome.ui) : undefined;
      return { ...this.result(call, tool.safety, 'ok', outcome.summary, outcome.data), ...(ui ? { ui } : {}), sources: outcome.sources ?? [] };
    } catch (err) {
      if (err instanceof ToolDenied) {
        this.deps.metrics.toolDenied(call.name);
        return this.result(call, tool.safety, 'denied', err.message);
      }
      if (err instanceof ToolFailure) return this.result(call, tool.safety, 'error', err.message);
      this.deps.logger.error({ err, tool: call.name, turn_id: ctx.turnId }, 'tool failed');
      return this.result(call, tool.safety, 'error', `${call.name} failed: ${(err as Error).message}`);
    }
  }

  /** The `tool` message the model gets for `call`: scrubbed of vault secrets, at most MAX_RESULT_CHARS. */
  result(call: ToolCall, safety: SafetyLevel, status: ToolStatus, summary: string, data?: unknown): ToolRun {
    const clean = this.deps.scrubber.scrub(summary);
    const payload = this.deps.scrubber.scrubValue({ status, summary: clean, ...(data === undefined ? {} : { data }) });
    let content = JSON.stringify(payload);
    if (content.length > MAX_RESULT_CHARS) {
      content = JSON.stringify({ status, summary: clean, truncated: true, data_preview: content.slice(0, MAX_RESULT_CHARS - 200) });
    }
    return { call, safety, status, summary: clean, message: { role: 'tool', tool_call_id: call.id, name: call.name, content }, sources: [] };
  }
}

/** The parsed form of a `tool` message's content, for providers that read results back (the local agent). */
export interface ToolResultContent {
  status: ToolStatus;
  summary: string;
  data?: unknown;
}
