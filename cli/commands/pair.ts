// svc pair (spec 4.14, 4.6; docs/pairing.md): pairing phones, browsers, boards and other brains.
//   svc pair [--kind phone|browser|node|brain] [--pin] [--name N] [--node-id ID] [--ttl S] [--no-wait] [--json]
//       mint a one-time pair URL, print it as a QR code in the terminal, and wait until a device claims it
//   svc pair code <code>                    claim the 6-digit code a board shows ("NNN NNN")
//   svc pair list [--all] [--json]          paired devices (--all: also tokens not claimed yet)
//   svc pair prune [--older-than S] [--json] revoke unclaimed tokens
//   svc pair revoke <id>                    un-pair a device (dev_…) or revoke an unclaimed token (pair_…)
import type { Sade } from 'sade';
import type * as QrCodeModule from 'qrcode';
import type { CodeClaimResponse, PairedList, PairUrlResponse } from '../../protocol/pairing';
import { PAIR_KIND_NAMES } from '../../protocol/pairing';
import { callBrain, type Connection } from '../connection';
import { reportError, str, table, type CliIo, type CommandContext } from './key';

type Opts = Record<string, unknown>;

export interface PairArgs {
  kind?: string | undefined;
  pin: boolean;
  name?: string | undefined;
  nodeId?: string | undefined;
  ttl?: string | undefined;
  wait: boolean;
  json: boolean;
}

/** How often `svc pair` asks whether its token was claimed; it stops when the token expires. */
export const CLAIM_POLL_MS = 1000;

export interface PairDeps {
  sleep: (ms: number) => Promise<void>;
  now: () => number;
}

const realDeps: PairDeps = { sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)), now: Date.now };

/** The query of GET /api/devices/pair/url, or what is wrong with the arguments (exit 2). */
export function pairQuery(args: Omit<PairArgs, 'wait' | 'json'>): string | { problem: string } {
  const q = new URLSearchParams();
  if (args.kind !== undefined) {
    if (!(PAIR_KIND_NAMES as readonly string[]).includes(args.kind)) return { problem: `--kind is one of ${PAIR_KIND_NAMES.join(', ')}` };
    q.set('kind', args.kind);
  }
  if (args.pin) q.set('pin', 'true');
  if (args.name !== undefined) q.set('name', args.name);
  if (args.nodeId !== undefined) q.set('node_id', args.nodeId);
  if (args.ttl !== undefined) {
    if (!/^\d{1,6}$/.test(args.ttl)) return { problem: '--ttl is a number of seconds' };
    q.set('ttl_seconds', args.ttl);
  }
  return q.size > 0 ? `?${q.toString()}` : '';
}

/** The pair URL as a QR code of block characters, small enough for an 80-column terminal. */
export async function terminalQr(text: string): Promise<string> {
  const mod = (await import('qrcode')) as typeof QrCodeModule & { default?: typeof QrCodeModule };
  return (mod.default ?? mod).toString(text, { type: 'terminal', small: true, errorCorrectionLevel: 'L' });
}

export async function pair(conn: Connection, io: CliIo, args: PairArgs, deps: PairDeps = realDeps): Promise<number> {
  const query = pairQuery(args);
  if (typeof query !== 'string') {
    io.err.write(`svc: ${query.problem}\n`);
    return 2;
  }
  const r = await callBrain<PairUrlResponse>(conn, 'GET', `/api/devices/pair/url${query}`);
  if (r.status !== 200) {
    reportError(io, r.status, r.body);
    const command = (r.body as { error?: { details?: { command?: unknown } | null } } | null)?.error?.details?.command;
    if (typeof command === 'string') io.err.write(`fix: run \`${command}\`, then \`svc pair\` again\n`);
    return 1;
  }
  const minted = r.body;
  if (args.json) io.out.write(`${JSON.stringify(minted)}\n`);
  else {
    io.out.write(await terminalQr(minted.url));
    io.out.write(`\nscan the code, or open this on the device (${minted.payload.kind}, one use, expires ${new Date(minted.payload.expires_at * 1000).toLocaleTimeString()}):\n  ${minted.url}\n`);
    if (minted.pin !== undefined) io.out.write(`PIN (type it on the device): ${minted.pin}\n`);
  }
  return args.wait ? waitForClaim(conn, io, minted, args.json, deps) : 0;
}

/** Polls the paired list until a device holds the token (0), or it expires or is revoked (1). */
async function waitForClaim(conn: Connection, io: CliIo, minted: PairUrlResponse, json: boolean, deps: PairDeps): Promise<number> {
  if (!json) io.err.write('waiting for the device… (Ctrl-C stops waiting; the token stays valid until it expires)\n');
  const deadline = minted.payload.expires_at * 1000 + CLAIM_POLL_MS;
  while (deps.now() <= deadline) {
    const r = await callBrain<PairedList>(conn, 'GET', '/api/devices/paired?include_unclaimed=true');
    if (r.status !== 200) return reportError(io, r.status, r.body);
    const device = r.body.devices.find((d) => d.pair_id === minted.pair_id);
    if (device) {
      io.out.write(json ? `${JSON.stringify(device)}\n` : `paired ${device.kind} "${device.name}" as ${device.device_id}\n`);
      return 0;
    }
    const token = r.body.unclaimed?.find((u) => u.pair_id === minted.pair_id);
    if (!token || token.state !== 'unclaimed') {
      io.err.write(`svc: the pairing token is ${token?.state ?? 'revoked'}; run \`svc pair\` for a new one\n`);
      return 1;
    }
    await deps.sleep(CLAIM_POLL_MS);
  }
  io.err.write('svc: the pairing token expired before a device claimed it; run `svc pair` for a new one\n');
  return 1;
}

export async function pairCode(conn: Connection, io: CliIo, code: string, json: boolean): Promise<number> {
  const r = await callBrain<CodeClaimResponse>(conn, 'POST', '/api/devices/pair/code/claim', { code });
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(json ? `${JSON.stringify(r.body)}\n` : `paired node ${r.body.node_id} ("${r.body.name}") as ${r.body.device_id}\n`);
  return 0;
}

const when = (seconds: number): string => new Date(seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

export function describePaired(list: PairedList): string {
  const rows = list.devices.map((d) => [d.device_id, d.kind, d.name, d.node_id ?? '', when(d.paired_at), String(d.connections)]);
  let text = list.devices.length === 0 ? 'no paired devices; `svc pair` pairs one\n' : table([['ID', 'KIND', 'NAME', 'NODE', 'PAIRED', 'CONNECTIONS'], ...rows]);
  if (list.unclaimed && list.unclaimed.length > 0) {
    text += `\nnot claimed yet:\n${table([['ID', 'KIND', 'NAME', 'STATE', 'PIN', 'EXPIRES'], ...list.unclaimed.map((u) => [u.pair_id, u.kind, u.name ?? '', u.state, u.pin_required ? 'yes' : 'no', when(u.expires_at)])])}`;
  }
  return text;
}

export async function pairList(conn: Connection, io: CliIo, args: { all: boolean; json: boolean }): Promise<number> {
  const r = await callBrain<PairedList>(conn, 'GET', `/api/devices/paired${args.all ? '?include_unclaimed=true' : ''}`);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? `${JSON.stringify(r.body)}\n` : describePaired(r.body));
  return 0;
}

export async function pairPrune(conn: Connection, io: CliIo, args: { olderThan?: string | undefined; json: boolean }): Promise<number> {
  if (args.olderThan !== undefined && !/^\d{1,9}$/.test(args.olderThan)) {
    io.err.write('svc: --older-than is a number of seconds\n');
    return 2;
  }
  const r = await callBrain<{ revoked: number; pair_ids: string[] }>(conn, 'POST', '/api/devices/pair/prune', args.olderThan === undefined ? {} : { older_than_seconds: Number(args.olderThan) });
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? `${JSON.stringify(r.body)}\n` : `revoked ${r.body.revoked} unclaimed pairing token${r.body.revoked === 1 ? '' : 's'}\n`);
  return 0;
}

export async function pairRevoke(conn: Connection, io: CliIo, id: string): Promise<number> {
  const r = await callBrain<{ id: string; connections_closed: number }>(conn, 'DELETE', `/api/devices/${encodeURIComponent(id)}`);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  const closed = r.body.connections_closed;
  io.out.write(`revoked ${r.body.id}${closed > 0 ? ` (closed ${closed} open connection${closed === 1 ? '' : 's'})` : ''}\n`);
  return 0;
}

export function registerPairCommands(prog: Sade, ctx: CommandContext): void {
  prog
    .command('pair', 'Pair a phone, browser, board or brain: prints a QR code and a one-time URL, waits for the device (list, code, prune, revoke)')
    .option('--kind', `What pairs: ${PAIR_KIND_NAMES.join(', ')} (default phone)`)
    .option('--pin', 'Also ask for a PIN the brain chooses and prints here')
    .option('--name', 'A name for the device')
    .option('--node-id', 'The node_id of a board (kind node)')
    .option('--ttl', 'Seconds the token stays valid (60-86400, default 600)')
    .option('--no-wait', 'Print the code and URL and exit without waiting for the claim')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) =>
      ctx.exit(await pair(ctx.conn(o), ctx, { kind: str(o.kind), pin: o.pin === true, name: str(o.name), nodeId: str(o['node-id']), ttl: str(o.ttl), wait: o.wait !== false, json: o.json === true })),
    );
  prog
    .command('pair code <code>', 'Pair the board showing this 6-digit code')
    .option('--json', 'Machine-readable output')
    .action(async (code: string, o: Opts) => ctx.exit(await pairCode(ctx.conn(o), ctx, code, o.json === true)));
  prog
    .command('pair list', 'Paired devices and their open connections; --all adds tokens not claimed yet')
    .option('--all', 'Also list unclaimed pairing tokens')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await pairList(ctx.conn(o), ctx, { all: o.all === true, json: o.json === true })));
  prog
    .command('pair prune', 'Revoke unclaimed pairing tokens (all, or those older than --older-than seconds)')
    .option('--older-than', 'Only tokens minted at least this many seconds ago')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await pairPrune(ctx.conn(o), ctx, { olderThan: str(o['older-than']), json: o.json === true })));
  prog.command('pair revoke <id>', 'Un-pair a device (its credential stops at once, its connections close) or revoke an unclaimed token').action(async (id: string, o: Opts) => ctx.exit(await pairRevoke(ctx.conn(o), ctx, id)));
}
