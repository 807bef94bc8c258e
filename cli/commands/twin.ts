// svc twin approvals|policies (issue 11, spec 4.14): the tool calls waiting for approval, via
// /api/approvals, and the approval policy, via /api/approvals/policies (docs/approvals.md).
//   svc twin approvals [--json]                       pending requests
//   svc twin approvals approve <id> [--session <id>]  runs the held call once
//   svc twin approvals reject <id> [--session <id>]   the call never runs
//   svc twin policies [--json]                        policy per safety level and per tool
//   svc twin policies set <tool|level> <auto|ask|deny>
// The policies are settings (`approvals` in settings.json); GET/PUT /api/approvals/policies shows and
// changes them, and the brain applies a change at once and keeps it in settings.json.
import type { Sade } from 'sade';
import type { ApprovalList, ApprovalPolicies, ApprovalRequest, ApprovalResolution } from '../../protocol/approvals';
import { callBrain, type Connection } from '../connection';
import { reportError, table, type CliIo, type CommandContext } from './key';

type Opts = Record<string, unknown>;

export const TWIN_USAGE = `usage: svc twin approvals [--json]
       svc twin approvals approve <id> [--session <id>]
       svc twin approvals reject <id> [--session <id>]
       svc twin policies [--json]
       svc twin policies set <tool|level> <auto|ask|deny>
`;

export const LEVELS = ['passive', 'active', 'privileged', 'dangerous'] as const;
export const POLICIES = ['auto', 'ask', 'deny'] as const;
/** Tool names as the settings schema bounds them. */
const TOOL_NAME = /^[^\s]{1,64}$/;

export async function approvalsList(conn: Connection, io: CliIo, args: { json: boolean; now: number }): Promise<number> {
  const r = await callBrain<ApprovalList>(conn, 'GET', '/api/approvals');
  if (r.status !== 200) return reportError(io, r.status, r.body);
  if (args.json) io.out.write(`${JSON.stringify(r.body.approvals)}\n`);
  else if (r.body.approvals.length === 0) io.out.write('no tool calls are waiting for approval\n');
  else io.out.write(table([['ID', 'TOOL', 'LEVEL', 'SESSION', 'AGE', 'ARGS'], ...r.body.approvals.map((a) => approvalRow(a, args.now))]));
  return 0;
}

export async function approvalsResolve(conn: Connection, io: CliIo, args: { action: 'approve' | 'reject'; id: string; session?: string | undefined }): Promise<number> {
  const body = args.session === undefined ? {} : { session_id: args.session };
  const r = await callBrain<ApprovalResolution>(conn, 'POST', `/api/approvals/${encodeURIComponent(args.id)}/${args.action}`, body);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  if (r.body.status === 'approved') io.out.write(`approved ${r.body.request_id} (${r.body.tool_name}): ${oneLine(r.body.summary ?? '')}\n`);
  else io.out.write(`rejected ${r.body.request_id} (${r.body.tool_name}); it will not run\n`);
  return 0;
}

export async function policiesShow(conn: Connection, io: CliIo, args: { json: boolean }): Promise<number> {
  const r = await callBrain<ApprovalPolicies>(conn, 'GET', '/api/approvals/policies');
  if (r.status !== 200) return reportError(io, r.status, r.body);
  if (args.json) {
    io.out.write(`${JSON.stringify(r.body)}\n`);
    return 0;
  }
  const tools = Object.entries(r.body.tools).sort(([a], [b]) => a.localeCompare(b));
  io.out.write(table([['LEVEL', 'POLICY'], ...LEVELS.map((l) => [l, r.body.policies[l]])]));
  io.out.write(tools.length === 0 ? 'no per-tool overrides\n' : `\n${table([['TOOL', 'POLICY'], ...tools])}`);
  return 0;
}

/** Sets a level's or a tool's policy; 2 for a bad target or policy (checked before calling the brain). */
export async function policiesSet(conn: Connection, io: CliIo, args: { target: string; policy: string }): Promise<number> {
  if (!(POLICIES as readonly string[]).includes(args.policy)) {
    io.err.write(`svc: policy '${args.policy}': expected one of ${POLICIES.join(', ')}\n`);
    return 2;
  }
  if (!TOOL_NAME.test(args.target)) {
    io.err.write(`svc: '${args.target}': expected a safety level (${LEVELS.join(', ')}) or a tool name of 1-64 characters without spaces\n`);
    return 2;
  }
  const r = await callBrain<ApprovalPolicies>(conn, 'PUT', '/api/approvals/policies', { target: args.target, policy: args.policy });
  if (r.status !== 200) return reportError(io, r.status, r.body);
  const what = (LEVELS as readonly string[]).includes(args.target) ? `${args.target} tools` : `the tool ${args.target}`;
  io.out.write(`the policy of ${what} is now ${args.policy}\n`);
  return 0;
}

function approvalRow(a: ApprovalRequest, now: number): string[] {
  return [a.request_id, a.tool_name, a.safety_level, a.session_id, age(now - a.created_at), summariseArgs(a.args)];
}

/** Seconds as the largest whole unit: 42s, 5m, 3h, 2d. */
export function age(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** key=value pairs on one line, cut to `max` characters with an ellipsis. */
export function summariseArgs(args: Record<string, unknown>, max = 60): string {
  const text = oneLine(Object.entries(args).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' '));
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

export function registerTwinCommands(prog: Sade, ctx: CommandContext): void {
  const usage = () => {
    ctx.out.write(TWIN_USAGE);
    ctx.exit(2);
  };
  prog.command('twin', 'Approvals of held tool calls and the approval policy: approvals, policies').action(usage);
  prog
    .command('twin approvals', 'Tool calls waiting for your approval (approve or reject <id>)')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await approvalsList(ctx.conn(o), ctx, { json: o.json === true, now: Date.now() / 1000 })));
  for (const action of ['approve', 'reject'] as const) {
    prog
      .command(`twin approvals ${action} <id>`, action === 'approve' ? 'Run a held tool call (once)' : 'Refuse a held tool call; it never runs')
      .action(async (id: string, o: Opts) => ctx.exit(await approvalsResolve(ctx.conn(o), ctx, { action, id, session: typeof o.session === 'string' ? o.session : undefined })));
  }
  prog
    .command('twin policies', 'The approval policy per safety level and per tool')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await policiesShow(ctx.conn(o), ctx, { json: o.json === true })));
  prog
    .command('twin policies set <target> <policy>', 'Set a safety level or a tool to auto, ask or deny (applies at once, kept in settings.json)')
    .action(async (target: string, policy: string, o: Opts) => ctx.exit(await policiesSet(ctx.conn(o), ctx, { target, policy })));
}
