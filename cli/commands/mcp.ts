// svc mcp (issue 16; docs/mcp.md, docs/cli.md):
//   svc mcp                                          the brain's tools for an MCP client, over stdio (mcp-bridge.ts)
//   svc mcp servers [list] [--json]                  external MCP servers: source, state, tools, last error
//   svc mcp servers add <name> -- <command> [args…]  a stdio server (or --http <url>); --env/--headers as JSON,
//                                                    secrets as {"vault": "<namespace>/<key>"}; --safety <level>
//   svc mcp servers remove <name> [--json]           one added here (settings.json's are edited there)
//   svc mcp servers test <name> [--json]             connect once and list its tools
//   svc mcp secret <key>                             a secret in the vault as mcp/<key> (typed hidden, or from stdin)
import type { Sade } from 'sade';
import { SERVER_NAME, type ConfigValue, type McpServerDeclaration, type McpServerList, type McpServerStatus, type McpTestResult } from '../../protocol/mcp';
import { callBrain, type Connection } from '../connection';
import { readSecret, reportError, str, table, type CliIo, type CommandContext } from './key';

type Opts = Record<string, unknown>;

const SAFETY = ['passive', 'active', 'privileged', 'dangerous'] as const;

export interface AddArgs {
  name: string;
  command?: string | undefined;
  http?: string | undefined;
  env?: string | undefined;
  headers?: string | undefined;
  safety?: string | undefined;
  cwd?: string | undefined;
  json: boolean;
}

/** A JSON object of string or {vault} values (--env, --headers), or what is wrong with it. */
export function configValues(flag: string, text: string | undefined): Record<string, ConfigValue> | { problem: string } | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    return { problem: `--${flag}: expected a JSON object, e.g. '{"TOKEN": {"vault": "mcp/token"}, "MODE": "ro"}'` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { problem: `--${flag}: expected a JSON object` };
  for (const [k, v] of Object.entries(parsed)) {
    const ok = typeof v === 'string' || (typeof v === 'object' && v !== null && typeof (v as { vault?: unknown }).vault === 'string' && Object.keys(v as object).length === 1);
    if (!ok) return { problem: `--${flag} ${k}: a value is a string or {"vault": "<namespace>/<key>"}` };
  }
  return parsed as Record<string, ConfigValue>;
}

/** The declaration `svc mcp servers add` sends, or what is wrong with the arguments. */
export function declarationOf(args: AddArgs): McpServerDeclaration | { problem: string } {
  if (!new RegExp(SERVER_NAME).test(args.name)) return { problem: `${args.name}: a server name is lower-case letters and digits, at most 24, starting with a letter` };
  const words = args.command?.split(/\s+/).filter(Boolean) ?? [];
  if ((words.length > 0) === (args.http !== undefined)) return { problem: 'give the command after `--` (a stdio server) or --http <url>, not both' };
  if (args.safety !== undefined && !(SAFETY as readonly string[]).includes(args.safety)) return { problem: `--safety ${args.safety}: expected one of ${SAFETY.join(', ')}` };
  const env = configValues('env', args.env);
  const headers = configValues('headers', args.headers);
  for (const v of [env, headers]) if (v && 'problem' in v && typeof v.problem === 'string') return { problem: v.problem };
  const d: McpServerDeclaration = { name: args.name };
  if (words.length > 0) Object.assign(d, { command: words[0], ...(words.length > 1 ? { args: words.slice(1) } : {}) });
  if (args.http !== undefined) d.url = args.http;
  if (env) d.env = env;
  if (headers) d.headers = headers;
  if (args.cwd !== undefined) d.cwd = args.cwd;
  if (args.safety !== undefined) d.safety = args.safety as McpServerDeclaration['safety'];
  return d;
}

const row = (s: McpServerStatus): string[] => [s.name, s.source, s.transport, s.state, String(s.tools.length), s.safety, s.last_error ?? '-'];

export async function serversList(conn: Connection, io: CliIo, json: boolean): Promise<number> {
  const r = await callBrain<McpServerList>(conn, 'GET', '/api/mcp/servers');
  if (r.status !== 200) return reportError(io, r.status, r.body);
  if (json) io.out.write(`${JSON.stringify(r.body.servers)}\n`);
  else if (r.body.servers.length === 0) io.out.write('no MCP servers (add one with `svc mcp servers add <name> -- <command>` or in settings.json mcp.servers)\n');
  else io.out.write(table([['NAME', 'SOURCE', 'TRANSPORT', 'STATE', 'TOOLS', 'SAFETY', 'LAST ERROR'], ...r.body.servers.map(row)]));
  return 0;
}

export async function serversAdd(conn: Connection, io: CliIo, args: AddArgs): Promise<number> {
  const d = declarationOf(args);
  if ('problem' in d) {
    io.err.write(`svc: ${d.problem}\n`);
    return 2;
  }
  const r = await callBrain<McpServerStatus>(conn, 'POST', '/api/mcp/servers', d);
  if (r.status !== 201) return reportError(io, r.status, r.body);
  io.out.write(args.json ? `${JSON.stringify(r.body)}\n` : `added MCP server ${r.body.name} (${r.body.state}); \`svc mcp servers\` shows its tools once it is connected\n`);
  return 0;
}

export async function serversRemove(conn: Connection, io: CliIo, name: string, json: boolean): Promise<number> {
  const r = await callBrain(conn, 'DELETE', `/api/mcp/servers/${encodeURIComponent(name)}`);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(json ? `${JSON.stringify(r.body)}\n` : `removed MCP server ${name}; its tools are gone\n`);
  return 0;
}

export async function serversTest(conn: Connection, io: CliIo, name: string, json: boolean): Promise<number> {
  // Connecting may take the brain's connect timeout (30 s by default): wait a little longer than that.
  const r = await callBrain<McpTestResult>(conn, 'POST', `/api/mcp/servers/${encodeURIComponent(name)}/test`, undefined, 120_000);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  if (json) io.out.write(`${JSON.stringify(r.body)}\n`);
  else if (!r.body.ok) io.err.write(`svc: MCP server ${name} failed: ${r.body.error ?? 'unknown error'}\n`);
  else io.out.write(r.body.tools.length === 0 ? `MCP server ${name} answered with no tools\n` : table([['TOOL', 'REMOTE NAME', 'DESCRIPTION'], ...r.body.tools.map((t) => [t.name, t.remote_name, t.description.split('\n')[0]!.slice(0, 80)])]));
  return r.body.ok ? 0 : 1;
}

/** The value is typed (hidden) or piped, never an argument: a command line is visible to every user of the machine. */
export async function secretSet(conn: Connection, io: CliIo, key: string): Promise<number> {
  const secret = await readSecret(io, `mcp/${key}`, undefined);
  if (secret === '') {
    io.err.write('svc: no secret was given (type it, or pipe it on stdin)\n');
    return 2;
  }
  const r = await callBrain<{ ref: { vault: string } }>(conn, 'PUT', `/api/mcp/secrets/${encodeURIComponent(key)}`, { value: secret });
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(`stored; refer to it as {"vault": "${r.body.ref.vault}"}\n`);
  return 0;
}

export function registerMcpCommands(prog: Sade, ctx: CommandContext): void {
  prog.command('mcp', 'Serve the running brain\'s tools to an MCP client over stdio (what a desktop app spawns)').action(async (o: Opts) => {
    const { bridge } = await import('./mcp-bridge');
    ctx.exit(await bridge(ctx.conn(o), { stdin: ctx.stdin, stdout: ctx.out, err: ctx.err }));
  });
  const list = async (o: Opts) => ctx.exit(await serversList(ctx.conn(o), ctx, o.json === true));
  prog.command('mcp servers', 'External MCP servers: source, state, tools, last error').option('--json', 'Machine-readable output').action(list);
  prog.command('mcp servers list', 'External MCP servers: source, state, tools, last error').option('--json', 'Machine-readable output').action(list);
  prog
    .command('mcp servers add <name> [command]', 'Add an MCP server: `-- <command> [args…]` (stdio) or --http <url>; connected at once, kept across restarts')
    .option('--http', 'The server\'s Streamable HTTP endpoint')
    .option('--env', 'stdio: environment as a JSON object; a secret as {"vault": "mcp/<key>"}')
    .option('--headers', 'HTTP: request headers as a JSON object; a secret as {"vault": "mcp/<key>"}')
    .option('--cwd', 'stdio: working directory')
    .option('--safety', `Safety level of its tools (${SAFETY.join(', ')}; default privileged: held for approval)`)
    .option('--json', 'Machine-readable output')
    .action(async (name: string, command: string | undefined, o: Opts) =>
      ctx.exit(await serversAdd(ctx.conn(o), ctx, { name, command, http: str(o.http), env: str(o.env), headers: str(o.headers), cwd: str(o.cwd), safety: str(o.safety), json: o.json === true })),
    );
  prog
    .command('mcp servers remove <name>', 'Remove an MCP server added with `svc mcp servers add`')
    .option('--json', 'Machine-readable output')
    .action(async (name: string, o: Opts) => ctx.exit(await serversRemove(ctx.conn(o), ctx, name, o.json === true)));
  prog
    .command('mcp servers test <name>', 'Connect to a declared MCP server once and list its tools')
    .option('--json', 'Machine-readable output')
    .action(async (name: string, o: Opts) => ctx.exit(await serversTest(ctx.conn(o), ctx, name, o.json === true)));
  prog.command('mcp secret <key>', 'Store a secret for MCP servers in the vault as mcp/<key> (typed hidden, or piped on stdin)').action(async (key: string, o: Opts) => ctx.exit(await secretSet(ctx.conn(o), ctx, key)));
}
