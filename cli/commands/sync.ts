// svc sync (spec 4.14; docs/sync.md "What the user sees"): this brain's federated memory sync.
//   svc sync status [--json]                 on or off (and why), brain id, key fingerprint, peers, ops, failures
//   svc sync peers [--json]                  the paired brains: state, direction, last synced, ops behind, url
//   svc sync pair <url> [--pin N] [--sync-url ws://…] [--json]
//       complete brain pairing with the svc://pair URL `svc pair --kind brain` printed on the other brain
//   svc sync now [--peer ID] [--timeout S] [--json]   dial now and wait until each peer is caught up
//   svc sync forget <peer> [--json]          unpair a brain, named by its brain id or a unique prefix of it
import type { Sade } from 'sade';
import type { SyncNowResult, SyncPeerList, SyncPeerView, SyncStatus } from '../../protocol/sync-api';
import { parsePairUrl, PairPayloadError } from '../../mesh/pair-payload';
import { callBrain, type Connection } from '../connection';
import { age } from './bridge';
import { reportError, str, table, type CliIo, type CommandContext } from './key';

type Opts = Record<string, unknown>;

export const SYNC_USAGE = `svc sync status [--json]
svc sync peers [--json]
svc sync pair <url> [--pin N] [--sync-url ws://host:port/sync] [--json]
svc sync now [--peer ID] [--timeout S] [--json]
svc sync forget <peer> [--json]
Details: svc sync <subcommand> --help
`;

/** How long `svc sync now` lets the brain wait for its peers unless --timeout says (the API's default). */
export const DEFAULT_NOW_TIMEOUT_S = 15;
/** The HTTP call outlives the brain's own wait by this much, so the brain's answer always arrives. */
const NOW_CALL_MARGIN_MS = 10_000;
/**
 * The brain answers a pairing only after the other brain's signed answer, trying each address of the
 * pair URL in turn (up to 8 and an mDNS name, 10 s each for the PIN and for the request). The CLI
 * waits that long, so it never reports a failure for a pairing the brain then completes.
 */
const PAIR_CALL_TIMEOUT_MS = 9 * 2 * 10_000 + 10_000;
/** The brain id column shows this many characters, enough to name a peer (`svc sync forget` takes a prefix). */
export const SHORT_ID = 8;

const json = (body: unknown): string => `${JSON.stringify(body)}\n`;
const ago = (at: number | null, now: number): string => (at === null ? 'never' : age(new Date(at).toISOString(), now));

// ── status ─────────────────────────────────────────────────────────────────────────────────────

export function describeStatus(s: SyncStatus, now: number): string {
  if (!s.enabled) return `sync is off: this brain is single-node (${s.disabled_by ?? 'disabled'})\nbrain id: ${s.brain_id}\n`;
  const lines = [
    'sync: on',
    `brain id: ${s.brain_id}`,
    `key fingerprint: ${s.key_fingerprint ?? '-'}`,
    `peers: ${s.active_peers} active of ${s.peers}`,
    `last synced: ${ago(s.last_synced_at, now)}`,
    `ops: ${s.ops.local} written here, ${s.ops.total} in all`,
  ];
  const failures = Object.entries(s.failures).filter(([, n]) => n > 0);
  if (failures.length > 0) lines.push(`failures since start: ${failures.map(([reason, n]) => `${reason} ${n}`).join(', ')}`);
  if (s.peers === 0) lines.push(NO_PEERS);
  return `${lines.join('\n')}\n`;
}

const NO_PEERS = "no peers yet: run `svc pair --kind brain` on the other brain, then `svc sync pair '<url>'` here";

export async function syncStatus(conn: Connection, io: CliIo, args: { json: boolean; now?: () => number }): Promise<number> {
  const r = await callBrain<SyncStatus>(conn, 'GET', '/api/sync/status');
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? json(r.body) : describeStatus(r.body, (args.now ?? Date.now)()));
  return 0;
}

// ── peers ──────────────────────────────────────────────────────────────────────────────────────

const failureText = (p: SyncPeerView): string => (p.last_failure ? `${p.last_failure.reason} (${p.last_failure.code})` : '-');

export function describePeers(list: SyncPeerList, now: number): string {
  if (list.peers.length === 0) return `${NO_PEERS}\n`;
  const rows = list.peers.map((p) => [p.brain_id.slice(0, SHORT_ID), p.name, p.state, p.direction ?? '-', ago(p.last_synced_at, now), String(p.ops_behind), p.url ?? 'dials in', failureText(p)]);
  return table([['BRAIN', 'NAME', 'STATE', 'DIRECTION', 'LAST SYNCED', 'BEHIND', 'URL', 'LAST FAILURE'], ...rows]);
}

export async function syncPeers(conn: Connection, io: CliIo, args: { json: boolean; now?: () => number }): Promise<number> {
  const r = await callBrain<SyncPeerList>(conn, 'GET', '/api/sync/peers');
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? json(r.body) : describePeers(r.body, (args.now ?? Date.now)()));
  return 0;
}

// ── pair ───────────────────────────────────────────────────────────────────────────────────────

export interface SyncPairArgs {
  url: string;
  pin?: string | undefined;
  syncUrl?: string | undefined;
  json: boolean;
}

/** What is wrong with the arguments of `svc sync pair` before any call (exit 2), or undefined. */
export function pairProblem(args: SyncPairArgs): string | undefined {
  if (args.pin !== undefined && !/^[0-9]{4,8}$/.test(args.pin)) return '--pin is the 4 to 8 digits the other brain printed';
  if (args.syncUrl !== undefined && !/^wss?:\/\/./.test(args.syncUrl)) return '--sync-url is the ws:// or wss:// address of the other brain\'s /sync';
  let kind: string;
  try {
    kind = parsePairUrl(args.url).kind;
  } catch (err) {
    if (!(err instanceof PairPayloadError)) throw err;
    return `not a pair URL (${err.message}); run \`svc pair --kind brain\` on the other brain and pass the svc://pair URL it prints`;
  }
  if (kind !== 'brain') return `this pair URL is for a ${kind}; run \`svc pair --kind brain\` on the other brain for one that pairs brains`;
  return undefined;
}

interface PairRefusal {
  error?: { message?: string; details?: { pin_required?: unknown; attempts_left?: unknown } | null };
}

/**
 * The brain's refusal of a pairing. A 401 about the PIN (none given, or a wrong one the other brain
 * counted) is not about the API token, so it gets what to do with the PIN instead of the token hint.
 */
function pairRefused(io: CliIo, status: number, body: unknown): number {
  const e = (body as PairRefusal | null)?.error;
  const needsPin = e?.details?.pin_required === true;
  const left = e?.details?.attempts_left;
  if (status !== 401 || (!needsPin && typeof left !== 'number')) return reportError(io, status, body);
  io.err.write(`svc: ${e?.message ?? 'the PIN was refused'}\n`);
  if (needsPin) io.err.write('fix: run again with --pin and the PIN `svc pair --kind brain --pin` printed on the other brain\n');
  else if (typeof left === 'number' && left > 0) io.err.write(`${left} attempt${left === 1 ? '' : 's'} left before the other brain revokes the pair URL\n`);
  return 1;
}

export async function syncPair(conn: Connection, io: CliIo, args: SyncPairArgs): Promise<number> {
  const problem = pairProblem(args);
  if (problem !== undefined) {
    io.err.write(`svc: ${problem}\n`);
    return 2;
  }
  const body = { url: args.url, ...(args.pin !== undefined ? { pin: args.pin } : {}), ...(args.syncUrl !== undefined ? { sync_url: args.syncUrl } : {}) };
  const r = await callBrain<SyncPeerView>(conn, 'POST', '/api/sync/pair', body, PAIR_CALL_TIMEOUT_MS);
  if (r.status !== 201) return pairRefused(io, r.status, r.body);
  const p = r.body;
  io.out.write(args.json ? json(p) : `paired with ${p.name} (${p.brain_id}); syncing from ${p.url ?? 'when it dials in'}\n`);
  return 0;
}

// ── resolving a peer by id prefix ─────────────────────────────────────────────────────────────

export type PeerMatch = { peer: SyncPeerView } | { none: true } | { candidates: SyncPeerView[] };

/** The peer a full brain id or a unique prefix of one names (case does not matter). */
export function matchPeer(peers: readonly SyncPeerView[], given: string): PeerMatch {
  const id = given.trim().toLowerCase();
  const exact = peers.find((p) => p.brain_id === id);
  if (exact) return { peer: exact };
  const found = id === '' ? [] : peers.filter((p) => p.brain_id.startsWith(id));
  if (found.length === 1) return { peer: found[0]! };
  return found.length === 0 ? { none: true } : { candidates: found };
}

async function peerList(conn: Connection, io: CliIo): Promise<SyncPeerView[] | number> {
  const r = await callBrain<SyncPeerList>(conn, 'GET', '/api/sync/peers');
  return r.status === 200 ? r.body.peers : reportError(io, r.status, r.body);
}

/** The peer `given` names among `peers`, or the exit code after saying why there is none (1) or which it could be (2). */
function pickPeer(io: CliIo, peers: readonly SyncPeerView[], given: string): SyncPeerView | number {
  const m = matchPeer(peers, given);
  if ('peer' in m) return m.peer;
  if ('none' in m) {
    io.err.write(`svc: no peer's brain id starts with ${JSON.stringify(given)}; \`svc sync peers\` lists them\n`);
    return 1;
  }
  io.err.write(`svc: ${JSON.stringify(given)} names ${m.candidates.length} peers; give more of the brain id:\n`);
  for (const p of m.candidates) io.err.write(`  ${p.brain_id}  ${p.name}\n`);
  return 2;
}

// ── now ────────────────────────────────────────────────────────────────────────────────────────

/** --timeout in seconds → the API's timeout_ms (100 ms to 120 s), or what is wrong with it. */
export function nowTimeoutMs(timeout: string | undefined): number | { problem: string } {
  if (timeout === undefined) return DEFAULT_NOW_TIMEOUT_S * 1000;
  const ms = /^\d{1,3}(\.\d{1,3})?$/.test(timeout) ? Math.round(Number(timeout) * 1000) : NaN;
  return ms >= 100 && ms <= 120_000 ? ms : { problem: '--timeout is a number of seconds from 0.1 to 120' };
}

export function describeNow(result: SyncNowResult, names: ReadonlyMap<string, string>): string {
  if (result.peers.length === 0) return `${NO_PEERS}\n`;
  return result.peers
    .map((p) => {
      const failure = p.failure ? `: ${p.failure.reason} (${p.failure.code}) ${p.failure.message}` : '';
      return `${names.get(p.brain_id) ?? p.brain_id.slice(0, SHORT_ID)}: ${p.outcome}, sent ${p.sent}, received ${p.received}${failure}\n`;
    })
    .join('');
}

export async function syncNow(conn: Connection, io: CliIo, args: { peer?: string | undefined; timeout?: string | undefined; json: boolean }): Promise<number> {
  const timeoutMs = nowTimeoutMs(args.timeout);
  if (typeof timeoutMs !== 'number') {
    io.err.write(`svc: ${timeoutMs.problem}\n`);
    return 2;
  }
  const peers = await peerList(conn, io);
  if (typeof peers === 'number') return peers;
  const picked = args.peer === undefined ? undefined : pickPeer(io, peers, args.peer);
  if (typeof picked === 'number') return picked;
  const peer = picked?.brain_id;
  const r = await callBrain<SyncNowResult>(conn, 'POST', '/api/sync/now', { ...(peer !== undefined ? { peer } : {}), timeout_ms: timeoutMs }, timeoutMs + NOW_CALL_MARGIN_MS);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? json(r.body) : describeNow(r.body, new Map(peers.map((p) => [p.brain_id, p.name]))));
  return r.body.peers.every((p) => p.outcome === 'synced') ? 0 : 1;
}

// ── forget ─────────────────────────────────────────────────────────────────────────────────────

export async function syncForget(conn: Connection, io: CliIo, args: { peer: string; json: boolean }): Promise<number> {
  const peers = await peerList(conn, io);
  if (typeof peers === 'number') return peers;
  const found = pickPeer(io, peers, args.peer);
  if (typeof found === 'number') return found;
  const r = await callBrain<{ brain_id: string; forgotten: true }>(conn, 'DELETE', `/api/sync/peers/${encodeURIComponent(found.brain_id)}`);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? json(r.body) : `forgot ${found.name}: its links are closed and it can no longer sync with this brain; pair again to resume\n`);
  return 0;
}

// ── registration ───────────────────────────────────────────────────────────────────────────────

export function registerSyncCommands(prog: Sade, ctx: CommandContext): void {
  prog.command('sync', 'Federated memory sync with other brains: status, peers, pair, now, forget').action(() => {
    ctx.out.write(SYNC_USAGE);
    ctx.exit(2);
  });
  prog
    .command('sync status', 'Whether sync is on (and why not), this brain id and key fingerprint, active peers, last synced, ops, failures')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await syncStatus(ctx.conn(o), ctx, { json: o.json === true })));
  prog
    .command('sync peers', 'The paired brains: state, direction, last synced, ops behind, url, last failure')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await syncPeers(ctx.conn(o), ctx, { json: o.json === true })));
  prog
    .command('sync pair <url>', 'Pair with another brain from the svc://pair URL `svc pair --kind brain` printed there')
    .option('--pin', 'The PIN the other brain printed, when its URL asks for one')
    .option('--sync-url', "Where to dial the other brain's /sync afterwards (ws://host:port/sync), when not where pairing reached it")
    .option('--json', 'Machine-readable output')
    .action(async (url: string, o: Opts) => ctx.exit(await syncPair(ctx.conn(o), ctx, { url, pin: str(o.pin), syncUrl: str(o['sync-url']), json: o.json === true })));
  prog
    .command('sync now', 'Sync now and wait until each peer is caught up; exit 1 when one is not')
    .option('--peer', 'Only this peer (its brain id or a unique prefix)')
    .option('--timeout', `Seconds to wait (default ${DEFAULT_NOW_TIMEOUT_S}, at most 120)`)
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await syncNow(ctx.conn(o), ctx, { peer: str(o.peer), timeout: str(o.timeout), json: o.json === true })));
  prog
    .command('sync forget <peer>', 'Unpair a brain (its brain id or a unique prefix): its links close and it can no longer sync')
    .option('--json', 'Machine-readable output')
    .action(async (peer: string, o: Opts) => ctx.exit(await syncForget(ctx.conn(o), ctx, { peer, json: o.json === true })));
}
