// svc publisher (spec 4.14, 5.1; docs/signing.md "The publisher identity", "Trusting a publisher"):
//   svc publisher [show] [--json]          this machine's publisher identity and the brain's trusted keys
//   svc publisher init [--json]            make the publisher key (~/.svc/publisher.key, 0600) unless it exists
//   svc publisher trust <key_id> <public_key> [--json]   pin a publisher's key in the brain's vault
//   svc publisher untrust <key_id> [--json]              unpin it
// The identity is local (the private key never leaves ~/.svc); the trusted keys are the brain's (vault
// namespace publisher_keys, /api/publishers/keys). `show` prints the identity even when no brain runs.
import type { Sade } from 'sade';
import type { PublisherKey } from '../../protocol/publishers';
import { loadOrCreatePublisherKey, PUBLISHER_KEY_FILE, PublisherKeyError, readPublisherKey } from '../../signing/publisher-key';
import { BrainUnreachableError, callBrain, type Connection } from '../connection';
import { reportError, table, type CliIo, type CommandContext } from './key';
import { join } from 'node:path';

type Opts = Record<string, unknown>;

export const PUBLISHER_USAGE = `svc publisher [show] [--json]
svc publisher init [--json]
svc publisher trust <key_id> <public_key> [--json]
svc publisher untrust <key_id> [--json]
`;

const json = (body: unknown): string => `${JSON.stringify(body)}\n`;

interface Identity {
  key_id: string;
  public_key: string;
  path: string;
}

function identity(home: string): Identity | null {
  const key = readPublisherKey(home);
  return key === undefined ? null : { key_id: key.keyId, public_key: key.publicKey, path: join(home, PUBLISHER_KEY_FILE) };
}

/** The brain's trusted keys, or why they could not be read. */
async function trusted(conn: Connection): Promise<{ keys: PublisherKey[] } | { unavailable: string }> {
  try {
    const r = await callBrain<{ keys: PublisherKey[] }>(conn, 'GET', '/api/publishers/keys');
    if (r.status === 200) return r.body;
    return { unavailable: `the brain answered ${r.status}` };
  } catch (err) {
    if (err instanceof BrainUnreachableError) return { unavailable: `no brain at ${conn.url}` };
    throw err;
  }
}

/** Runs `fn`; a damaged publisher key file is exit 1 with what to do (signing/publisher-key.ts says it). */
function withPublisherKey(io: Pick<CliIo, 'err'>, fn: () => number): number {
  try {
    return fn();
  } catch (err) {
    if (err instanceof PublisherKeyError) {
      io.err.write(`svc publisher: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

export async function publisherShow(conn: Connection, io: CliIo, args: { json: boolean }): Promise<number> {
  const found: { me: Identity | null } = { me: null };
  const read = withPublisherKey(io, () => ((found.me = identity(conn.home)), 0));
  if (read !== 0) return read;
  const { me } = found;
  const keys = await trusted(conn);
  if (args.json) {
    io.out.write(json({ identity: me, trusted: 'keys' in keys ? keys.keys : null, ...('unavailable' in keys ? { trusted_unavailable: keys.unavailable } : {}) }));
    return 0;
  }
  const lines = me ? [`publisher key: ${me.key_id}`, `public key: ${me.public_key}`, `file: ${me.path}`] : [`no publisher key in ${conn.home} (svc publisher init makes one)`];
  lines.push('');
  if ('unavailable' in keys) lines.push(`trusted publisher keys: unknown (${keys.unavailable})`);
  else if (keys.keys.length === 0) lines.push('trusted publisher keys: none (svc publisher trust <key_id> <public_key>)');
  else lines.push('trusted publisher keys:', table([['KEY ID', 'PUBLIC KEY'], ...keys.keys.map((k) => [k.key_id, k.public_key])]).trimEnd());
  io.out.write(`${lines.join('\n')}\n`);
  return 0;
}

export function publisherInit(io: CliIo, args: { home: string; json: boolean }): number {
  return withPublisherKey(io, () => {
    const existed = readPublisherKey(args.home) !== undefined;
    const key = loadOrCreatePublisherKey(args.home);
    const result = { key_id: key.keyId, public_key: key.publicKey, path: join(args.home, PUBLISHER_KEY_FILE), created: !existed };
    io.out.write(
      args.json
        ? json(result)
        : `${existed ? 'publisher key already there (it is made once and never replaced)' : 'publisher key made'}: ${result.path}\nkey id: ${key.keyId}\npublic key: ${key.publicKey}\nbrains trust it with: svc publisher trust ${key.keyId} ${key.publicKey}\n`,
    );
    return 0;
  });
}

export async function publisherTrust(conn: Connection, io: CliIo, args: { keyId: string; publicKey: string; json: boolean }): Promise<number> {
  const r = await callBrain<{ key_id: string; public_key: string; changed: boolean }>(conn, 'PUT', `/api/publishers/keys/${encodeURIComponent(args.keyId)}`, { public_key: args.publicKey });
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? json(r.body) : r.body.changed ? `trusted ${args.keyId}: skills and apps it signs install here\n` : `${args.keyId} was trusted already with this key\n`);
  return 0;
}

export async function publisherUntrust(conn: Connection, io: CliIo, args: { keyId: string; json: boolean }): Promise<number> {
  const r = await callBrain<{ key_id: string; removed: true }>(conn, 'DELETE', `/api/publishers/keys/${encodeURIComponent(args.keyId)}`);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(args.json ? json(r.body) : `untrusted ${args.keyId}: nothing it signs installs here any more; skills it signed show status error after the brain restarts\n`);
  return 0;
}

export function registerPublisherCommands(prog: Sade, ctx: CommandContext): void {
  prog
    .command('publisher', 'The publisher identity (~/.svc/publisher.key) and the publisher keys the brain trusts: show, init, trust, untrust')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await publisherShow(ctx.conn(o), ctx, { json: o.json === true })));
  prog
    .command('publisher show', 'This machine\'s publisher key and the keys the brain trusts')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await publisherShow(ctx.conn(o), ctx, { json: o.json === true })));
  prog
    .command('publisher init', 'Make the publisher key (once; 0600) unless it exists')
    .option('--json', 'Machine-readable output')
    .action((o: Opts) => ctx.exit(publisherInit(ctx, { home: ctx.conn(o).home, json: o.json === true })));
  prog
    .command('publisher trust <key_id> <public_key>', 'Trust a publisher: pin its Ed25519 public key (base64) under its key id in the brain\'s vault')
    .option('--json', 'Machine-readable output')
    .action(async (keyId: string, publicKey: string, o: Opts) => ctx.exit(await publisherTrust(ctx.conn(o), ctx, { keyId, publicKey, json: o.json === true })));
  prog
    .command('publisher untrust <key_id>', 'Stop trusting a publisher key')
    .option('--json', 'Machine-readable output')
    .action(async (keyId: string, o: Opts) => ctx.exit(await publisherUntrust(ctx.conn(o), ctx, { keyId, json: o.json === true })));
}
