// svc access (spec 4.14, 4.7; docs/access.md): who can reach the brain, changed without a restart.
//   svc access [status] [--json]   the mode, where the brain listens, the URLs devices can use, the tunnel
//   svc access lan                 listen on every interface (other devices can pair and connect)
//   svc access localhost           loopback only (the default); LAN connections are closed
//   svc access remote-up           also reachable on your tailnet through Tailscale Serve
//   svc access remote-down         take the tunnel away; back to lan or localhost
import type { Sade } from 'sade';
import type { AccessStatus } from '../../protocol/access';
import { callBrain, type Connection } from '../connection';
import { reportError, type CliIo, type CommandContext } from './key';

export const ACCESS_USAGE = `usage: svc access [status] [--json]
       svc access lan | localhost | remote-up | remote-down
`;

const CHANGES = { lan: '/api/access/lan', localhost: '/api/access/localhost', 'remote-up': '/api/access/remote-up', 'remote-down': '/api/access/remote-down' } as const;
type Change = keyof typeof CHANGES;
const isChange = (action: string): action is Change => Object.hasOwn(CHANGES, action);

/** Tailscale Serve may wait on the network (the brain gives it 20 s). */
const TUNNEL_TIMEOUT_MS = 30_000;

export async function access(conn: Connection, io: CliIo, args: { action: string | undefined; json: boolean }): Promise<number> {
  const action = args.action ?? 'status';
  if (action !== 'status' && !isChange(action)) {
    io.err.write(`svc: unknown access action ${JSON.stringify(action)}\n${ACCESS_USAGE}`);
    return 2;
  }
  const r = action === 'status' ? await callBrain<AccessStatus>(conn, 'GET', '/api/access/status') : await callBrain<AccessStatus>(conn, 'POST', CHANGES[action], undefined, TUNNEL_TIMEOUT_MS);
  if (r.status !== 200) return refused(io, r.status, r.body);
  if (args.json) io.out.write(`${JSON.stringify(r.body)}\n`);
  else io.out.write(describe(r.body));
  return 0;
}

/** The brain's refusal, and its fix when it names one (a missing Tailscale, a pinned address). */
function refused(io: CliIo, status: number, body: unknown): number {
  reportError(io, status, body);
  const fix = (body as { error?: { details?: { fix?: unknown } | null } } | null)?.error?.details?.fix;
  if (typeof fix === 'string') io.err.write(`fix: ${fix}\n`);
  return 1;
}

const hostPort = (a: AccessStatus['listening'][number]): string => (a.family === 'IPv6' ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`);

export function describe(s: AccessStatus): string {
  const under = s.mode === 'remote' ? ` over ${s.listener}` : '';
  const lines = [`mode: ${s.mode}${under} (listening on ${s.listening.map(hostPort).join(', ') || 'nothing yet'})`];
  if (s.pinned_host !== null) lines.push(`the listen address is pinned to ${s.pinned_host} (server.host, SVC_HOST or --host)`);
  if (s.urls.length > 0) lines.push('reachable at:', ...s.urls.map((u) => `  ${u}`));
  else lines.push('reachable from this machine only; `svc access lan` lets other devices on your network connect');
  const t = s.tunnel;
  lines.push(`tunnel: ${t.provider} ${t.state}${t.url ? ` ${t.url}` : ''}`);
  if (t.error) lines.push(`  ${t.error}`);
  if (t.fix) lines.push(`  fix: ${t.fix}`);
  return `${lines.join('\n')}\n`;
}

export function registerAccessCommands(prog: Sade, ctx: CommandContext): void {
  prog
    .command('access [action]', 'Who can reach the brain: status, lan, localhost, remote-up, remote-down (no restart)')
    .option('--json', 'Machine-readable output')
    .action(async (action: string | undefined, o: Record<string, unknown>) => ctx.exit(await access(ctx.conn(o), ctx, { action, json: o.json === true })));
}
