// svc twin approvals|policies (issue 11, spec 4.14): the tool calls waiting for approval, via
// /api/approvals, and the approval policy (docs/approvals.md).
//   svc twin approvals [--json]                       pending requests
//   svc twin approvals approve <id> [--session <id>]  runs the held call once
//   svc twin approvals reject <id> [--session <id>]   the call never runs
//   svc twin policies [--json]                        policy per safety level and per tool
//   svc twin policies set <tool|level> <auto|ask|deny>
// The policies are the `approvals` section of $SVC_HOME/settings.json, which the brain reads at start:
// `set` rewrites the file atomically (STYLE.md 11) and says to restart the brain.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Sade } from 'sade';
import type { ApprovalList, ApprovalRequest, ApprovalResolution } from '../../protocol/approvals';
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
type Level = (typeof LEVELS)[number];
type Policy = (typeof POLICIES)[number];
/** The defaults of the settings schema (daemon/approvals/approval-policy.ts; docs/approvals.md "The policy"). */
const DEFAULT_LEVELS: Record<Level, Policy> = { passive: 'auto', active: 'auto', privileged: 'ask', dangerous: 'ask' };
/** Tool names as the settings schema bounds them. */
const TOOL_NAME = /^[^\s]{1,64}$/;

export interface EffectivePolicies {
  policies: Record<Level, Policy>;
  tools: Record<string, Policy>;
}

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

/** The policies in force after the brain's next start: settings.json's `approvals` over the defaults. */
export function readPolicies(settingsFile: string): EffectivePolicies {
  const approvals = (readSettings(settingsFile).approvals ?? {}) as { policies?: Partial<Record<Level, Policy>>; tools?: Record<string, Policy> };
  return { policies: { ...DEFAULT_LEVELS, ...approvals.policies }, tools: { ...approvals.tools } };
}

export function policiesShow(io: CliIo, args: { settingsFile: string; json: boolean }): number {
  const p = readPolicies(args.settingsFile);
  if (args.json) {
    io.out.write(`${JSON.stringify(p)}\n`);
    return 0;
  }
  const tools = Object.entries(p.tools).sort(([a], [b]) => a.localeCompare(b));
  io.out.write(table([['LEVEL', 'POLICY'], ...LEVELS.map((l) => [l, p.policies[l]])]));
  io.out.write(tools.length === 0 ? 'no per-tool overrides\n' : `\n${table([['TOOL', 'POLICY'], ...tools])}`);
  return 0;
}

/** Sets a level's or a tool's policy in settings.json; 2 for a bad target or policy. */
export function policiesSet(io: CliIo, args: { settingsFile: string; target: string; policy: string }): number {
  if (!(POLICIES as readonly string[]).includes(args.policy)) {
    io.err.write(`svc: policy '${args.policy}': expected one of ${POLICIES.join(', ')}\n`);
    return 2;
  }
  if (!TOOL_NAME.test(args.target)) {
    io.err.write(`svc: '${args.target}': expected a safety level (${LEVELS.join(', ')}) or a tool name of 1-64 characters without spaces\n`);
    return 2;
  }
  const settings = readSettings(args.settingsFile);
  const approvals = { ...(settings.approvals as Record<string, unknown> | undefined) };
  const key = (LEVELS as readonly string[]).includes(args.target) ? 'policies' : 'tools';
  approvals[key] = { ...(approvals[key] as Record<string, Policy> | undefined), [args.target]: args.policy };
  writeFileAtomic(args.settingsFile, `${JSON.stringify({ ...settings, approvals }, null, 2)}\n`, 0o600);
  const what = key === 'policies' ? `${args.target} tools` : `the tool ${args.target}`;
  io.out.write(`set the policy of ${what} to ${args.policy} in ${args.settingsFile}; restart the brain to apply it (svc stop && svc start, or systemctl restart svc-brain)\n`);
  return 0;
}

function readSettings(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${file}: expected a JSON object`);
  return parsed as Record<string, unknown>;
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

/** settings.json is written whole and atomically (STYLE.md 11): temp file, fsync, rename. */
function writeFileAtomic(file: string, text: string, mode: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

export function registerTwinCommands(prog: Sade, ctx: CommandContext): void {
  const usage = () => {
    ctx.out.write(TWIN_USAGE);
    ctx.exit(2);
  };
  const settingsFile = (o: Opts) => join(ctx.conn(o).home, 'settings.json');
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
    .action((o: Opts) => ctx.exit(policiesShow(ctx, { settingsFile: settingsFile(o), json: o.json === true })));
  prog
    .command('twin policies set <target> <policy>', 'Set a level or tool to auto, ask or deny in settings.json (applies at the next brain start)')
    .action((target: string, policy: string, o: Opts) => ctx.exit(policiesSet(ctx, { settingsFile: settingsFile(o), target, policy })));
}
