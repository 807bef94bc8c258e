// The agent's TaskFlow tools (issue 12; docs/taskflows.md "The agent's tools"): start_taskflow starts a
// flow in the chat's own session, so its taskflow_update frames reach the person who asked for it;
// list_taskflows tells the model which flows exist. The steps are protocol/taskflows.ts StepSpec as
// they are: one schema for the API, the CLI and the model.
import { Type } from '@sinclair/typebox';
import { defineTool, ToolFailure, type Tool } from '../kernel/tool';
import { AppError } from '../kernel/errors';
import { CreateTaskflow, FlowStatus, type TaskflowSummary } from '../../protocol/taskflows';
import type { FlowEngine } from './taskflow-routes';

/** Most flows list_taskflows hands the model: a long list would crowd its context. */
export const LIST_TOOL_LIMIT = { max: 50, default: 20 } as const;

export function taskflowTools(engine: FlowEngine): Tool[] {
  return [startTaskflowTool(engine), listTaskflowsTool(engine)];
}

const { title, steps, context, schedule } = CreateTaskflow.properties;

function startTaskflowTool(engine: FlowEngine): Tool {
  return defineTool({
    spec: {
      name: 'start_taskflow',
      description:
        'Start a background workflow (a TaskFlow) that runs its steps in order and survives restarts: tool calls, agent prompts, waits (a time, a duration or an event), notes and branches. ' +
        'A step may use an earlier result as {{steps.N.result.field}} or a context value as {{context.key}}. Use it for anything that should happen later, repeatedly (schedule) or in several steps.',
      parameters: Type.Object({ title, steps, context, schedule }, { additionalProperties: false }),
    },
    safety: 'active',
    everywhere: true,
    run: async (args, ctx) => {
      const flow = await refusalsToFailures(() => engine.create({ ...args, session_id: ctx.sessionId }, { sessionId: ctx.sessionId }));
      const count = flow.steps.length;
      return {
        summary: `started flow ${flow.id} '${flow.title}' (${count} step${count === 1 ? '' : 's'})${flow.schedule ? `, on the schedule ${flow.schedule}` : ''}`,
        data: { id: flow.id, status: flow.status },
        sources: [`taskflow:${flow.id}`],
        ui: { id: `taskflow-${flow.id}`, template: 'card', title: flow.title, data: { id: flow.id, status: flow.status, steps: count, current_step: flow.current_step, schedule: flow.schedule } },
      };
    },
  });
}

function listTaskflowsTool(engine: FlowEngine): Tool {
  return defineTool({
    spec: {
      name: 'list_taskflows',
      description: 'The TaskFlows of this chat (or of every chat with all_sessions), newest first, with their status.',
      parameters: Type.Object(
        {
          status: Type.Optional(FlowStatus),
          all_sessions: Type.Optional(Type.Boolean({ description: 'Also flows started from other chats, the API or the command line (default false)' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_TOOL_LIMIT.max, description: `At most this many (default ${LIST_TOOL_LIMIT.default})` })),
        },
        { additionalProperties: false },
      ),
    },
    safety: 'passive',
    everywhere: true,
    run: async ({ status, all_sessions: all, limit }, ctx) => {
      const { count, taskflows } = engine.list({ limit: limit ?? LIST_TOOL_LIMIT.default, ...(status === undefined ? {} : { status }), ...(all === true ? {} : { sessionId: ctx.sessionId }) });
      const where = all === true ? '' : ' in this chat';
      if (count === 0) return { summary: `no ${status ?? ''}${status ? ' ' : ''}flows${where}`, data: { count, taskflows: [] } };
      return {
        summary: `${count} flow${count === 1 ? '' : 's'}${where}${taskflows.length < count ? `, ${taskflows.length} shown` : ''}: ${taskflows.map(describe).join('; ')}`,
        data: { count, taskflows: taskflows.map(({ id, title: t, status: s, current_step, error, wait_until, schedule: cron, session_id }) => ({ id, title: t, status: s, current_step, error, wait_until, schedule: cron, session_id })) },
        sources: taskflows.map((f) => `taskflow:${f.id}`),
      };
    },
  });
}

const describe = (f: TaskflowSummary): string => `${f.id} '${f.title}' ${f.status}${f.current_step === null ? '' : ` at step ${f.current_step}`}`;

/**
 * A flow the engine refuses (a step it cannot run, a transition it does not allow) is something the
 * model can fix in its next call, so it hears the engine's message; anything else is a bug the tool
 * runner logs.
 */
async function refusalsToFailures<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof AppError && err.status >= 400 && err.status < 500) throw new ToolFailure(withPlace(err));
    throw err;
  }
}

function withPlace(err: AppError): string {
  const d = err.details as { step?: unknown; field?: unknown } | null;
  if (typeof d?.step !== 'number' || err.message.includes(`step ${d.step}`)) return err.message;
  return `${err.message} (step ${d.step}${typeof d.field === 'string' ? `, field ${d.field}` : ''})`;
}
