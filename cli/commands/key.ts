// svc key add|list|remove|reset-cooldowns|recover (spec 4.14): labelled provider keys, kept in the
// brain's vault. The secret never goes on the command line (it would show in `ps` and shell history):
// add reads it from a hidden prompt, from stdin when piped, or from the variable --secret-env names.
import { createInterface } from 'node:readline/promises';
import type { Sade } from 'sade';
import type { AddKeyResponse, KeyInfo, KeysResponse, RecoverResponse, RemoveKeyResponse, ResetCooldownsResponse } from '../../protocol/providers';
import { callBrain, type Connection, type Env } from '../connection';

export interface CliIo {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  stdin: NodeJS.ReadStream;
  env: Env;
}

export interface CommandContext extends CliIo {
  conn: (o: Record<string, unknown>) => Connection;
  exit: (code: number) => void;
  usageError: (message: string) => never;
  /** A text argument; `-` reads it from stdin. */
  textArg: (value: string) => Promise<string>;
}

export const DEFAULT_LABEL = 'default';

/** The label of `svc key add <provider> [label]`: asked on a terminal (Enter keeps `default`), else `default`. */
export async function keyLabel(io: CliIo, provider: string, given: string | undefined): Promise<string> {
  if (given !== undefined) return given;
  if (!io.stdin.isTTY) return DEFAULT_LABEL;
  const rl = createInterface({ input: io.stdin, output: io.err, terminal: true });
  try {
    return (await rl.question(`label for this ${provider} key [${DEFAULT_LABEL}]: `)).trim() || DEFAULT_LABEL;
  } finally {
    rl.close();
  }
}

interface ErrorBody {
  error?: { code: string; message: string };
}

/** Prints the brain's error envelope; 1 for every refusal. */
export function reportError(io: Pick<CliIo, 'err'>, status: number, body: unknown): number {
  const e = (body as ErrorBody | null)?.error;
  const hint = status === 401 ? ' (the token comes from SVC_API_TOKEN or $SVC_HOME/api-token; `svc doctor` checks it)' : '';
  io.err.write(`svc: ${e ? e.message : `the brain answered ${status}`}${hint}\n`);
  return 1;
}

export async function keyAdd(conn: Connection, io: CliIo, args: { provider: string; label: string; replace: boolean; probe: boolean; secretEnv?: string | undefined }): Promise<number> {
  const secret = await readSecret(io, `${args.provider}/${args.label}`, args.secretEnv);
  if (!secret) {
    io.err.write('svc: no key given\n');
    return 2;
  }
  const r = await callBrain<AddKeyResponse>(conn, 'POST', `/api/providers/${enc(args.provider)}/keys`, { label: args.label, secret, replace: args.replace, probe: args.probe }, 60_000);
  if (r.status !== 201) return reportError(io, r.status, r.body);
  const probe = r.body.probe.models >= 0 ? `probe ok in ${Math.round(r.body.probe.latency_ms)} ms, ${r.body.probe.models} models visible` : 'not probed';
  io.out.write(`added ${r.body.key.provider}/${r.body.key.label} (fingerprint ${r.body.key.fingerprint}; ${probe})\n`);
  return 0;
}

export async function keyList(conn: Connection, io: CliIo, args: { provider?: string | undefined; json: boolean }): Promise<number> {
  const q = args.provider ? `?provider=${enc(args.provider)}` : '';
  const r = await callBrain<KeysResponse>(conn, 'GET', `/api/providers/keys${q}`);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  if (args.json) {
    io.out.write(`${JSON.stringify(r.body.keys)}\n`);
    return 0;
  }
  if (r.body.keys.length === 0) {
    io.out.write('no keys stored; add one with: svc key add <provider> [label]\n');
    return 0;
  }
  io.out.write(table([['PROVIDER', 'LABEL', 'FINGERPRINT', 'STATE', 'COOLDOWN'], ...r.body.keys.map(keyRow)]));
  return 0;
}

function keyRow(k: KeyInfo): string[] {
  const c = k.cooldown;
  const cooldown = c && c.active ? `${c.error_class} until ${c.until} (${c.strikes}x): ${c.message}` : '-';
  return [k.configured ? k.provider : `${k.provider} (not in chain)`, k.label, k.fingerprint, k.state, cooldown];
}

export async function keyRemove(conn: Connection, io: CliIo, args: { provider: string; label: string }): Promise<number> {
  const r = await callBrain<RemoveKeyResponse>(conn, 'DELETE', `/api/providers/${enc(args.provider)}/keys/${enc(args.label)}`);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(`removed ${args.provider}/${args.label}\n`);
  return 0;
}

export async function keyResetCooldowns(conn: Connection, io: CliIo, args: { provider?: string | undefined }): Promise<number> {
  const r = await callBrain<ResetCooldownsResponse>(conn, 'POST', '/api/providers/cooldowns/reset', args.provider ? { provider: args.provider } : {});
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(`cleared ${r.body.cleared} cooldown${r.body.cleared === 1 ? '' : 's'}${args.provider ? ` of ${args.provider}` : ''}\n`);
  return 0;
}

export async function keyRecover(conn: Connection, io: CliIo, args: { provider?: string | undefined; json: boolean }): Promise<number> {
  const r = await callBrain<RecoverResponse>(conn, 'POST', '/api/providers/keys/recover', args.provider ? { provider: args.provider } : {}, 120_000);
  if (r.status !== 200) return reportError(io, r.status, r.body);
  if (args.json) {
    io.out.write(`${JSON.stringify(r.body)}\n`);
    return r.body.vault === 'ok' && r.body.results.every((x) => x.result === 'recovered') ? 0 : 1;
  }
  if (r.body.vault === 'locked') {
    io.out.write('vault is locked after re-reading vault.json: check the vault key (svc doctor)\n');
    return 1;
  }
  io.out.write(`vault re-read: ${r.body.keys_in_vault} provider key${r.body.keys_in_vault === 1 ? '' : 's'}\n`);
  if (r.body.results.length === 0) io.out.write('no key is disabled for auth or billing\n');
  for (const x of r.body.results) {
    io.out.write(`${x.provider}/${x.label}: ${x.result === 'recovered' ? 're-enabled' : `still failing (${x.error_class ?? '?'}: ${x.message ?? ''})`}\n`);
  }
  return r.body.results.every((x) => x.result === 'recovered') ? 0 : 1;
}

/** --secret-env VAR, else a hidden prompt on a terminal, else the first line of stdin. */
export async function readSecret(io: CliIo, what: string, secretEnv: string | undefined): Promise<string> {
  if (secretEnv !== undefined) return (io.env[secretEnv] ?? '').trim();
  if (io.stdin.isTTY) return (await promptHidden(io, `API key for ${what} (input hidden): `)).trim();
  const parts: Buffer[] = [];
  for await (const chunk of io.stdin) parts.push(chunk as Buffer);
  return (Buffer.concat(parts).toString('utf8').split(/\r?\n/)[0] ?? '').trim();
}

function promptHidden(io: CliIo, prompt: string): Promise<string> {
  io.err.write(prompt);
  const stdin = io.stdin;
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (): void => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      io.err.write('\n');
    };
    const onData = (chunk: string): void => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') {
          finish();
          resolve(value);
          return;
        }
        if (ch === '\u0003') {
          finish();
          reject(new Error('cancelled'));
          return;
        }
        value = ch === '\u007f' || ch === '\b' ? value.slice(0, -1) : value + ch;
      }
    };
    stdin.on('data', onData);
  });
}

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

const enc = encodeURIComponent;

type Opts = Record<string, unknown>;
/** A flag's value as text; mri turns `--provider 7` into a number, a bare flag into true. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

const KEY_USAGE = `svc key add <provider> [label] [--replace] [--no-probe] [--secret-env VAR]
svc key list [--provider ID] [--json]
svc key remove <provider> <label>
svc key reset-cooldowns [provider]
svc key recover [provider] [--json]
Details: svc key <subcommand> --help
`;

export function registerKeyCommands(prog: Sade, ctx: CommandContext): void {
  prog.command('key', 'Labelled provider API keys: add, list, remove, reset-cooldowns, recover').action(() => {
    ctx.out.write(KEY_USAGE);
    ctx.exit(2);
  });
  prog
    .command('key add <provider> [label]', 'Store a labelled API key for a provider after probing it (label: asked on a terminal, else "default"; the key is read hidden, from stdin, or --secret-env)')
    .option('--replace', 'Overwrite a key with the same label')
    .option('--no-probe', 'Store without asking the provider first')
    .option('--secret-env', 'Read the key from this environment variable')
    .action(async (provider: string, label: string | undefined, o: Opts) =>
      ctx.exit(await keyAdd(ctx.conn(o), ctx, { provider, label: await keyLabel(ctx, provider, label), replace: o.replace === true, probe: o.probe !== false, secretEnv: str(o['secret-env']) })),
    );
  prog
    .command('key list', 'Keys per provider: label, fingerprint, cooldown state (never the key)')
    .option('--provider', 'Only this provider')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await keyList(ctx.conn(o), ctx, { provider: str(o.provider), json: o.json === true })));
  prog.command('key remove <provider> <label>', 'Delete a stored key').action(async (provider: string, label: string, o: Opts) => ctx.exit(await keyRemove(ctx.conn(o), ctx, { provider, label })));
  prog
    .command('key reset-cooldowns [provider]', 'Forget cooldowns and failure counts (of one provider, or all)')
    .action(async (provider: string | undefined, o: Opts) => ctx.exit(await keyResetCooldowns(ctx.conn(o), ctx, { provider })));
  prog
    .command('key recover [provider]', 'Re-read vault.json and re-enable keys disabled for auth or billing that the provider accepts again')
    .option('--json', 'Machine-readable output')
    .action(async (provider: string | undefined, o: Opts) => ctx.exit(await keyRecover(ctx.conn(o), ctx, { provider, json: o.json === true })));
}
