// Runs a first-party skill of skills/builtin/ the way the brain does, minus the brain: its folder read
// by skills/manifest.ts (so a broken manifest fails here), its params checked against the manifest's
// schema with Ajv (as daemon/kernel/tool-registry.ts checks a skill tool's arguments), then main.js in
// the real sandbox (skills/sandbox.ts runSkill) with a host whose tools answer from a table and record
// every call. The host's tool list is the manifest's, so a call to an undeclared tool is a policy kill.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Ajv } from 'ajv';
import { ToolRegistry } from '../../daemon/kernel/tool-registry';
import { validateFlow } from '../../daemon/taskflows/flow-validation';
import type { FlowEngine } from '../../daemon/taskflows/taskflow-routes';
import { taskflowTools } from '../../daemon/taskflows/taskflow-tools';
import type { CreateTaskflow, FlowStatus, TaskflowSummary } from '../../protocol/taskflows';
import { ToolFailure } from '../../daemon/kernel/tool';
import { readSkillDir, type Skill } from '../../skills/manifest';
import { ApprovalPending } from '../../skills/host-functions';
import { runSkill, type SkillOutcome } from '../../skills/sandbox';

export interface ToolCall {
  name: string;
  args: unknown;
}
/** A tool's answer as the brain's SkillRunner gives it ({summary, data}), or a throw the skill sees as a rejection. */
export type ToolAnswer = (args: Record<string, unknown>) => unknown;

/** The repository: the first folder above this file that holds package.json (source or .test-build). */
function repoRoot(from: string = import.meta.dirname): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}`);
    dir = up;
  }
  return dir;
}

export const BUILTIN_DIR = join(repoRoot(), 'skills', 'builtin');

const skills = new Map<string, Skill>();
export async function builtinSkill(id: string): Promise<Skill> {
  const cached = skills.get(id);
  if (cached) return cached;
  const read = await readSkillDir(join(BUILTIN_DIR, id));
  if (!read.ok) throw new Error(`skills/builtin/${id}: ${read.problems.join('; ')}`);
  skills.set(id, read.skill);
  return read.skill;
}

const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false });

/** What the manifest's params schema says about `params` (empty when they fit). */
export async function paramProblems(id: string, params: unknown): Promise<string[]> {
  const validate = ajv.compile((await builtinSkill(id)).manifest.params);
  return validate(params) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}

/** A tool answer that holds the call for approval, as the permission plane's `pending` does. */
export const held =
  (requestId: string, tool: string): ToolAnswer =>
  () => {
    throw new ApprovalPending(requestId, tool);
  };

/**
 * The tools of a real registry as a skill's host reaches them through daemon/skills/skill-runner.ts:
 * arguments checked against the tool's schema, the tool run, its answer as {summary, data}, a
 * ToolFailure as the rejection the skill sees. The tools are the brain's own code over fake ports.
 */
export function registryTools(registry: ToolRegistry, sessionId = 'dashboard'): Record<string, ToolAnswer> {
  const out: Record<string, ToolAnswer> = {};
  for (const name of registry.names()) {
    out[name] = async (args) => {
      const problems = registry.problems(name, args);
      if (problems.length > 0) throw new Error(`call_tool: invalid arguments for ${name}: ${problems.join('; ')}`);
      try {
        const outcome = await registry.get(name)!.run(args, { sessionId, turnId: `skill:test:${name}`, specialist: 'general', signal: new AbortController().signal });
        return { summary: outcome.summary, ...(outcome.data === undefined ? {} : { data: outcome.data }) };
      } catch (err) {
        if (err instanceof ToolFailure) throw new Error(`${name}: ${err.message}`);
        throw err;
      }
    };
  }
  return out;
}

/** start_taskflow and list_taskflows over an engine that validates like the real one and keeps what it was given. */
export function taskflowRig(listed: TaskflowSummary[] = [], registry = new ToolRegistry()) {
  const created: CreateTaskflow[] = [];
  const listCalls: unknown[] = [];
  const engine = {
    create: async (input: CreateTaskflow) => {
      validateFlow(input, registry);
      created.push(input);
      return { id: `flw_${created.length}`, title: input.title, status: 'queued', steps: input.steps, current_step: 0, schedule: null };
    },
    list: (filter: unknown) => (listCalls.push(filter), { count: listed.length, taskflows: listed }),
  } as unknown as FlowEngine;
  for (const tool of taskflowTools(engine)) registry.register('taskflows', tool);
  return { created, listCalls, registry, tools: registryTools(registry) };
}

export const flowSummary = (id: string, title: string, status: FlowStatus, waitUntil: number | null, session = 'dashboard'): TaskflowSummary => ({
  id,
  title,
  session_id: session,
  status,
  current_step: 0,
  context: {},
  error: null,
  wait_until: waitUntil,
  created_at: 1,
  updated_at: 1,
  started_at: null,
  completed_at: null,
  schedule: null,
  parent_id: null,
});

export interface BuiltinRun {
  outcome: SkillOutcome;
  calls: ToolCall[];
}

/** Runs skill `id` with `params` (which must fit its schema) against `tools`. */
export async function runBuiltin(id: string, params: Record<string, unknown>, tools: Record<string, ToolAnswer> = {}, wallMs = 5000): Promise<BuiltinRun> {
  const skill = await builtinSkill(id);
  const problems = await paramProblems(id, params);
  if (problems.length > 0) throw new Error(`params refused by the ${id} manifest: ${problems.join('; ')}`);
  const calls: ToolCall[] = [];
  const outcome = await runSkill({
    source: skill.source,
    params,
    limits: { wallMs },
    host: {
      tools: skill.manifest.permissions.tools,
      callTool: async (name, args) => {
        calls.push({ name, args });
        const answer = tools[name];
        if (!answer) throw new Error(`call_tool: there is no tool named ${name} in this brain`);
        return answer(args as Record<string, unknown>);
      },
      http: () => Promise.reject(new Error('a first-party skill reaches no network')),
    },
  });
  return { outcome, calls };
}

/** The result of a run that must have ended ok. */
export function resultOf<T>(run: BuiltinRun): T {
  if (!run.outcome.ok) throw new Error(`the run ended ${run.outcome.held ? 'held' : `as a ${run.outcome.kill} kill`}: ${run.outcome.message}`);
  return run.outcome.result as T;
}
