// svc grant add|revoke|list (issue 11): the folders the assistant's file tools may read or write, via
// /api/grants. A relative path is taken from the current directory; the brain stores the realpath.
//   svc grant add <path> [--write] [--for 2h]   read (or read and write) access, for a while or until revoked
//   svc grant revoke <path>                     removes the grant
//   svc grant list [--json]                     the grants in force
import { resolve } from 'node:path';
import type { Sade } from 'sade';
import type { Grant, GrantList, GrantRevoked } from '../../protocol/files';
import { callBrain, type Connection } from '../connection';
import { reportError, table, type CliIo, type CommandContext } from './key';

type Opts = Record<string, unknown>;

export const GRANT_USAGE = `usage: svc grant add <path> [--write] [--for 2h]
       svc grant revoke <path>
       svc grant list [--json]
`;

export async function grantAdd(conn: Connection, io: CliIo, args: { path: string; write: boolean; for?: string | undefined; cwd: string }): Promise<number> {
  const body = { path: resolve(args.cwd, args.path), ...(args.write ? { write: true } : {}), ...(args.for === undefined ? {} : { for: args.for }) };
  const r = await callBrain<Grant>(conn, 'POST', '/api/grants', body);
  if (r.status !== 201) return reportError(io, r.status, r.body);
  io.out.write(`granted ${r.body.mode === 'write' ? 'read and write' : 'read'} access to ${r.body.path} ${until(r.body)}\n`);
  return 0;
}

export async function grantRevoke(conn: Connection, io: CliIo, args: { path: string; cwd: string }): Promise<number> {
  const r = await callBrain<GrantRevoked>(conn, 'DELETE', '/api/grants', { path: resolve(args.cwd, args.path) });
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(`revoked the grant of ${r.body.revoked.path}\n`);
  return 0;
}

export async function grantList(conn: Connection, io: CliIo, args: { json: boolean }): Promise<number> {
  const r = await callBrain<GrantList>(conn, 'GET', '/api/grants');
  if (r.status !== 200) return reportError(io, r.status, r.body);
  if (args.json) io.out.write(`${JSON.stringify(r.body.grants)}\n`);
  else if (r.body.grants.length === 0) io.out.write('no folders granted; grant one with: svc grant add <path> [--write] [--for 2h]\n');
  else io.out.write(table([['PATH', 'MODE', 'EXPIRES'], ...r.body.grants.map((g) => [g.path, g.mode, g.expires_at ?? 'never'])]));
  return 0;
}

const until = (g: Grant): string => (g.expires_at === null ? 'until revoked' : `until ${g.expires_at}`);

export function registerGrantCommands(prog: Sade, ctx: CommandContext): void {
  prog.command('grant', 'Folders the file tools may use: add, revoke, list').action(() => {
    ctx.out.write(GRANT_USAGE);
    ctx.exit(2);
  });
  prog
    .command('grant add <path>', 'Let the assistant read a folder (--write: also change files in it) until revoked or for a while (--for 2h)')
    .option('--write', 'Also allow writing, editing, moving and deleting')
    .option('--for', 'How long, e.g. 90m, 2h, 1d12h (default: until revoked)')
    .action(async (path: string, o: Opts) => ctx.exit(await grantAdd(ctx.conn(o), ctx, { path, write: o.write === true, for: optionalText(o.for), cwd: process.cwd() })));
  prog.command('grant revoke <path>', 'Remove the grant of a folder').action(async (path: string, o: Opts) => ctx.exit(await grantRevoke(ctx.conn(o), ctx, { path, cwd: process.cwd() })));
  prog
    .command('grant list', 'The folders granted, their mode and expiry')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await grantList(ctx.conn(o), ctx, { json: o.json === true })));
}

const optionalText = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);
