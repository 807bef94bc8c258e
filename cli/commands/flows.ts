// svc flows (issue 12; docs/taskflows.md "From the command line"): the TaskFlows of the brain through
// /api/taskflows.
//   svc flows [list] [--status s] [--session id] [--limit n] [--json]   flows, newest first
//   svc flows show <id> [--json]                                         the flow and its step timeline
//   svc flows resume <id> [--retry|--skip]                               a waiting or failed flow; the decision for its current step
//   svc flows wait <id> [--until ISO]                                    pause a flow before its next step
//   svc flows cancel <id>                                                stop it for good
import type { Sade } from 'sade';
import { FLOW_STATUSES, TASKFLOW_LIST_LIMIT, type Step, type Taskflow, type TaskflowList, type TaskflowSummary, type Transition } from '../../protocol/taskflows';
import { callBrain, type Connection } from '../connection';
import { reportError, str, table, type CliIo, type CommandContext } from './key';

type Opts = Record<string, unknown>;

export interface ListArgs {
  status?: string | undefined;
  session?: string | undefined;
  limit?: string | undefined;
  json: boolean;
}

/** Flows, newest first; 2 for a status or limit the brain would refuse (checked before calling it). */
export async function flowsList(conn: Connection, io: CliIo, args: ListArgs): Promise<number> {
  const query = listQuery(args);
  if (typeof query !== 'string') {
    io.err.write(`svc: ${query.problem}\n`);
    return 2;
  }
  const r = await callBrain<TaskflowList>(conn, 'GET', `/api/taskflows${query}`);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  if (args.json) io.out.write(`${JSON.stringify(r.body.taskflows)}\n`);
  else if (r.body.taskflows.length === 0) io.out.write(`no ${args.status ? `${args.status} ` : ''}taskflows\n`);
  else io.out.write(table([['ID', 'STATUS', 'STEP', 'UPDATED', 'SESSION', 'TITLE'], ...r.body.taskflows.map(flowRow)]));
  return 0;
}

/** The query string of a list, or what is wrong with the arguments. */
export function listQuery(args: Omit<ListArgs, 'json'>): string | { problem: string } {
  const q = new URLSearchParams();
  if (args.status !== undefined) {
    if (!(FLOW_STATUSES as readonly string[]).includes(args.status)) return { problem: `--status ${args.status}: expected one of ${FLOW_STATUSES.join(', ')}` };
    q.set('status', args.status);
  }
  if (args.session !== undefined) q.set('session_id', args.session);
  if (args.limit !== undefined) {
    const { min, max } = TASKFLOW_LIST_LIMIT;
    if (!/^\d+$/.test(args.limit) || Number(args.limit) < min || Number(args.limit) > max) return { problem: `--limit ${args.limit}: expected a whole number from ${min} to ${max}` };
    q.set('limit', String(Number(args.limit)));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

const flowRow = (f: TaskflowSummary): string[] => [f.id, f.status, f.current_step === null ? '-' : String(f.current_step), clock(f.updated_at), f.session_id, oneLine(f.title)];

export async function flowsShow(conn: Connection, io: CliIo, args: { id: string; json: boolean }): Promise<number> {
  const r = await callBrain<Taskflow>(conn, 'GET', `/api/taskflows/${encodeURIComponent(args.id)}`);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? `${JSON.stringify(r.body)}\n` : describeFlow(r.body));
  return 0;
}

/** The flow, then its timeline: the flow's own transitions, then each step with its status and history. */
export function describeFlow(f: Taskflow): string {
  const lines = [`${f.id}  ${oneLine(f.title)}`, `  status ${f.status}${f.current_step === null ? '' : ` at step ${f.current_step}`}, session ${f.session_id}, created ${clock(f.created_at)}`];
  if (f.wait_until !== null) lines.push(`  waits until ${clock(f.wait_until)}`);
  if (f.schedule !== null) lines.push(`  schedule ${f.schedule}`);
  if (f.parent_id !== null) lines.push(`  a run of ${f.parent_id}`);
  if (f.error !== null) lines.push(`  error: ${oneLine(f.error)}`);
  lines.push(...f.history.map((t) => `  ${transition(t)}`), '');
  for (const s of f.steps) lines.push(...describeStep(s));
  return `${lines.join('\n')}\n`;
}

function describeStep(s: Step): string[] {
  const head = `${s.index}  ${s.type}${stepTarget(s)}  ${s.status}${s.approval_request_id === null ? '' : ` (approval ${s.approval_request_id})`}`;
  return [head, ...(s.error === null ? [] : [`     error: ${oneLine(s.error)}`]), ...s.history.map((t) => `     ${transition(t)}`)];
}

/** What a step acts on, in a few words: the tool's name, the wait's time or event. */
function stepTarget(s: Step): string {
  const i = s.input;
  if (i.type === 'tool') return ` ${i.tool}`;
  if (i.type === 'wait') return i.event ? ` for ${i.event.type}` : i.seconds !== undefined ? ` ${i.seconds}s` : i.until !== undefined ? ` until ${String(i.until)}` : '';
  if (i.type === 'branch') return ` to ${i.goto} if ${i.if.ref} ${i.if.op}${i.if.value === undefined ? '' : ` ${JSON.stringify(i.if.value)}`}`;
  return '';
}

const transition = (t: Transition): string => `${clock(t.at)}  ${t.from ?? '-'} → ${t.to}${t.reason ? `  ${oneLine(t.reason)}` : ''}`;

/** Epoch seconds as the local time of day, HH:MM:SS. */
export function clock(epochSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

export type FlowAction = { action: 'resume'; decision?: 'retry' | 'skip' | undefined } | { action: 'wait'; until?: string | undefined } | { action: 'cancel' };

/** resume, wait or cancel one flow; prints its status after the change. */
export async function flowsAct(conn: Connection, io: CliIo, id: string, act: FlowAction): Promise<number> {
  const r = await callBrain<Taskflow>(conn, 'POST', `/api/taskflows/${encodeURIComponent(id)}/${act.action}`, actionBody(act));
  if (r.status !== 200) return reportError(io, r.status, r.body);
  const f = r.body;
  // A completed flow's current step is past its last one: nothing to point at.
  const where = f.status === 'waiting' && f.wait_until !== null ? ` until ${clock(f.wait_until)}` : f.current_step === null || f.status === 'completed' ? '' : ` at step ${f.current_step}`;
  io.out.write(`${f.id} '${oneLine(f.title)}' is ${f.status}${where}\n`);
  return 0;
}

function actionBody(act: FlowAction): Record<string, unknown> {
  if (act.action === 'resume') return act.decision === undefined ? {} : { decision: act.decision };
  if (act.action === 'wait') return act.until === undefined ? {} : { until: /^\d+(\.\d+)?$/.test(act.until) ? Number(act.until) : act.until };
  return {};
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

export function registerFlowCommands(prog: Sade, ctx: CommandContext): void {
  const list = async (o: Opts) => ctx.exit(await flowsList(ctx.conn(o), ctx, { status: str(o.status), session: str(o.session), limit: str(o.limit), json: o.json === true }));
  const listOptions = (command: Sade) =>
    command
      .option('--status', `Only flows in this status (${FLOW_STATUSES.join(', ')})`)
      .option('--session', 'Only flows of this session')
      .option('--limit', `At most this many (${TASKFLOW_LIST_LIMIT.min}-${TASKFLOW_LIST_LIMIT.max}, default ${TASKFLOW_LIST_LIMIT.default})`)
      .option('--json', 'Machine-readable output')
      .action(list);
  listOptions(prog.command('flows', 'TaskFlows, background workflows: list, show, resume, wait, cancel'));
  listOptions(prog.command('flows list', 'TaskFlows, newest first'));
  prog
    .command('flows show <id>', 'A flow and its timeline: each step with its status changes')
    .option('--json', 'Machine-readable output')
    .action(async (id: string, o: Opts) => ctx.exit(await flowsShow(ctx.conn(o), ctx, { id, json: o.json === true })));
  prog
    .command('flows resume <id>', 'Resume a waiting or failed flow; --retry or --skip decides its current step (required for a step left unknown)')
    .option('--retry', 'Run the current step again (one left unknown, or failed)')
    .option('--skip', 'Move past the current step')
    .action(async (id: string, o: Opts) => {
      if (o.retry === true && o.skip === true) return ctx.usageError('flows resume: --retry or --skip, not both');
      const decision = o.retry === true ? 'retry' : o.skip === true ? 'skip' : undefined;
      ctx.exit(await flowsAct(ctx.conn(o), ctx, id, { action: 'resume', decision }));
    });
  prog
    .command('flows wait <id>', 'Pause a queued or running flow before its next step, until resumed or until --until')
    .option('--until', 'An ISO 8601 time with a zone (2026-05-01T07:30:00+02:00) or epoch seconds')
    .action(async (id: string, o: Opts) => ctx.exit(await flowsAct(ctx.conn(o), ctx, id, { action: 'wait', until: str(o.until) })));
  prog.command('flows cancel <id>', 'Cancel a flow; a completed or failed flow stays as it is').action(async (id: string, o: Opts) => ctx.exit(await flowsAct(ctx.conn(o), ctx, id, { action: 'cancel' })));
}
