// One run of an installed skill (docs/skills.md "Running a skill"): its params checked against the
// manifest's schema by the caller, then the sandbox (skills/) with a host that gives the skill exactly
// what its manifest allows. call_tool goes through the permission plane like any other call (turn id
// `skill:<id>:<run>`): a denial ends the run as a policy kill, a call the plane holds for approval ends
// it as held, with the request id — a skill never reaches a tool its user would have had to approve,
// and never waits in the sandbox for a person. A skill cannot call another skill's tool (no recursion
// through the pool). Tool results given to the skill, and the run's result and logs, are scrubbed of
// vault secrets. Every kill is counted in svc_sandbox_kills_total{reason}.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { ApprovalPending, PolicyRefusal, type HttpRequest, type HttpResponse, type SkillHost } from '../../skills/host-functions';
import type { SkillLimits, SkillOutcome, SkillRun } from '../../skills/sandbox';
import { SandboxPoolFull } from '../../skills/sandbox-pool';
import type { SkillManifest, SkillRunView } from '../../protocol/skills';
import type { Clock, SecretRedactor } from '../kernel/capability';
import type { PermissionHook } from '../kernel/permissions';
import { outsideTurnId } from '../kernel/permissions';
import type { ToolRegistry } from '../kernel/tool-registry';
import { ToolFailure } from '../kernel/tool';
import { AppError } from '../kernel/errors';
import { lazyModule } from '../kernel/lazy-module';

/** The network policy (node:https, node:dns), loaded by the first request a skill makes, not at start. */
const egress = lazyModule(() => import('../../skills/egress'));

/** Runs sandboxed code: the worker pool in the brain (skills/sandbox-pool.ts). */
export interface SkillExecutor {
  run(run: SkillRun): Promise<SkillOutcome>;
}

/** The prefix of every skill's tool: `skill_<id with _ for ->`. */
export const SKILL_TOOL_PREFIX = 'skill_';
export const toolNameOf = (id: string): string => `${SKILL_TOOL_PREFIX}${id.replaceAll('-', '_')}`;

export interface RunnableSkill {
  readonly manifest: SkillManifest;
  readonly source: string;
}

export interface RunRequest {
  readonly skill: RunnableSkill;
  readonly params: Record<string, unknown>;
  /** manual, tool, schedule, event:<type>. */
  readonly trigger: string;
  /** The session whose approvals list a held call joins. */
  readonly sessionId: string;
}

export interface SkillRunnerDeps {
  executor: SkillExecutor;
  tools: ToolRegistry;
  permissions: PermissionHook;
  secrets: SecretRedactor;
  clock: Clock;
  logger: Logger;
  limits: SkillLimits;
  /** Counts a kill (svc_sandbox_kills_total). */
  killed: (reason: string) => void;
  /** The network a manifest allows; skills/egress.ts unless a test gives its own. */
  egress?: (manifest: SkillManifest) => (request: HttpRequest) => Promise<HttpResponse>;
}

export class SkillRunner {
  constructor(private readonly deps: SkillRunnerDeps) {}

  async run(request: RunRequest): Promise<SkillRunView> {
    const runId = randomUUID();
    const started = this.deps.clock.now();
    const { manifest, source } = request.skill;
    const host = this.host(manifest, runId, request.sessionId);
    const outcome = await this.deps.executor.run({ source, params: request.params, limits: this.deps.limits, host }).catch((err: unknown) => {
      // A full queue is the brain being busy, not a bug: the caller may try again.
      if (err instanceof SandboxPoolFull) throw new AppError('UNAVAILABLE', `skill ${manifest.id} was not run: ${err.message}; try again shortly`, { id: manifest.id });
      throw err;
    });
    if (!outcome.ok && outcome.kill !== undefined) {
      this.deps.killed(outcome.kill);
      this.deps.logger.info({ skill: manifest.id, run_id: runId, kill: outcome.kill, message: outcome.message }, 'skill run killed');
    }
    const view: SkillRunView = {
      run_id: runId,
      trigger: request.trigger,
      started_at: started / 1000,
      duration_ms: this.deps.clock.now() - started,
      logs: outcome.logs,
      ...(outcome.ok ? { status: 'ok' as const, result: outcome.result } : outcome.held ? { status: 'held' as const, request_id: outcome.held.requestId, message: outcome.message } : { status: 'killed' as const, kill: outcome.kill, message: outcome.message }),
    };
    return this.deps.secrets.scrubValue(view);
  }

  private host(manifest: SkillManifest, runId: string, sessionId: string): SkillHost {
    const http = this.deps.egress?.(manifest) ?? (async (request: HttpRequest) => (await egress()).createEgress(manifest.permissions.network)(request));
    return {
      tools: manifest.permissions.tools,
      http,
      callTool: (name, args) => this.callTool(manifest.id, runId, sessionId, name, args),
    };
  }

  private async callTool(skillId: string, runId: string, sessionId: string, name: string, args: unknown): Promise<unknown> {
    if (name.startsWith(SKILL_TOOL_PREFIX)) throw new PolicyRefusal(`call_tool: "${name}" is a skill; a skill cannot run another skill`);
    const tool = this.deps.tools.get(name);
    if (!tool) throw new Error(`call_tool: there is no tool named ${name} in this brain`);
    const input = (typeof args === 'object' && args !== null && !Array.isArray(args) ? args : {}) as Record<string, unknown>;
    const problems = this.deps.tools.problems(name, input);
    if (problems.length > 0) throw new Error(`call_tool: invalid arguments for ${name}: ${problems.join('; ')}`);
    const turnId = outsideTurnId('skill', skillId, runId);
    const decision = await this.deps.permissions.check({ tool: name, safety: tool.safety, args: input, sessionId, turnId });
    if (decision.verdict === 'deny') throw new PolicyRefusal(`call_tool: ${decision.reason}`);
    if (decision.verdict === 'pending') throw new ApprovalPending(decision.requestId, name, `call_tool: ${name} waits for your approval (request ${decision.requestId}); once approved the call runs by itself, and the skill does not go on`);
    try {
      const outcome = await tool.run(input, { sessionId, turnId, specialist: 'general', signal: AbortSignal.timeout(60_000) });
      return this.deps.secrets.scrubValue({ summary: outcome.summary, ...(outcome.data === undefined ? {} : { data: outcome.data }) });
    } catch (err) {
      if (err instanceof ToolFailure) throw new Error(`${name}: ${err.message}`);
      this.deps.logger.error({ err, skill: skillId, tool: name }, 'a tool called by a skill failed');
      throw new Error(`${name} failed: ${(err as Error).message}`);
    }
  }
}
