// svc app sign|verify (spec 4.14, 2.1, 5.1; docs/signing.md): sign an app manifest with this publisher's
// key, and check a signed one the way a brain will.
//   svc app sign <manifest_path> --key-id <key_id> [--json]
//   svc app verify <signed_manifest_path> [--public-key B64] [--json]
// verify trusts the keys the brain pins (GET /api/publishers/keys), or the one --public-key gives when
// no brain is at hand; it prints OK (exit 0) or the reason (exit 1): malformed, unknown_key,
// key_mismatch, signature_mismatch, manifest_mismatch (manifest.json beside it is not what was signed),
// file_mismatch (a signed skill's file differs from the digest its manifest lists, or its entry has
// none: signed with `svc app sign` instead of `svc skills sign`), unreadable.
// Writes manifest.signed.json beside the manifest with the publisher key at <home>/publisher.key
// (~/.svc unless --home or $SVC_HOME), made on first use. There is no --private-key flag: the key never
// travels on a command line. --key-id is the name hosts pin the public key under (vault namespace
// publisher_keys); the key's own derived id is the suggestion printed when it differs.
import type { Sade } from 'sade';
import { KEY_ID_PATTERN } from '../../protocol/signing';
import { CanonicalJsonError } from '../../signing/canonical-json';
import { loadOrCreatePublisherKey, PublisherKeyError } from '../../signing/publisher-key';
import { signManifestFile } from '../../signing/signed-manifest-file';
import { reportError, str, type CliIo, type CommandContext } from './key';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { B64_32_PATTERN } from '../../protocol/signing';
import { canonicalJson } from '../../signing/canonical-json';
import { verifySignedManifestText, type PinnedKeys } from '../../signing/signed-manifest';
import { ManifestFileError, readManifest } from '../../signing/signed-manifest-file';
import { BrainUnreachableError, callBrain, type Connection } from '../connection';

type Opts = Record<string, unknown>;

export const APP_USAGE = `usage: svc app sign <manifest_path> --key-id <key_id> [--json]
       svc app verify <signed_manifest_path> [--public-key B64] [--json]
`;

const KEY_ID = new RegExp(KEY_ID_PATTERN);
const B64_32 = new RegExp(B64_32_PATTERN);

export interface AppSignArgs {
  readonly manifestPath: string;
  readonly keyId: string | undefined;
  /** Where publisher.key lives (the CLI's home, ~/.svc by default). */
  readonly home: string;
  readonly json: boolean;
}

/** svc app sign: exit 0 signed, 1 the manifest or key file is refused, 2 bad invocation. */
export function appSign(io: CliIo, args: AppSignArgs): number {
  if (args.keyId === undefined || !KEY_ID.test(args.keyId)) {
    io.err.write(`svc app sign: --key-id is required: 1-64 characters of A-Z a-z 0-9 . _ : - (starting with a letter or digit)\n${APP_USAGE}`);
    return 2;
  }
  try {
    const key = loadOrCreatePublisherKey(args.home);
    const written = signManifestFile(args.manifestPath, { keyId: args.keyId, privateKey: key.privateKey });
    const result = { path: written, key_id: args.keyId, public_key: key.publicKey };
    io.out.write(args.json ? `${JSON.stringify(result)}\n` : describeSigned(result, key.keyId));
    return 0;
  } catch (err) {
    if (err instanceof ManifestFileError || err instanceof CanonicalJsonError || err instanceof PublisherKeyError) {
      io.err.write(`svc app sign: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

function describeSigned(r: { path: string; key_id: string; public_key: string }, derivedId: string): string {
  const lines = [`signed: ${r.path}`, `key id: ${r.key_id}`, `public key: ${r.public_key}`, `hosts verify it once they pin this public key under key id ${r.key_id} (vault namespace publisher_keys)`];
  if (r.key_id !== derivedId) lines.push(`(this key's own id is ${derivedId}; every host must pin ${r.key_id} to this public key)`);
  return `${lines.join('\n')}\n`;
}

export interface AppVerifyArgs {
  readonly path: string;
  /** Trust this key for the envelope's key id instead of asking the brain. */
  readonly publicKey: string | undefined;
  readonly json: boolean;
}

type VerifyOutcome = { ok: true; key_id: string; signed_at: string } | { ok: false; reason: string; detail: string };

/** svc app verify: exit 0 and OK when the envelope verifies, 1 with the reason otherwise, 2 bad invocation. */
export async function appVerify(conn: Connection, io: CliIo, args: AppVerifyArgs): Promise<number> {
  if (args.publicKey !== undefined && !B64_32.test(args.publicKey)) {
    io.err.write('svc app verify: --public-key is a 32-byte Ed25519 public key in base64 (44 characters ending in =)\n');
    return 2;
  }
  const outcome = await verifyFile(conn, io, args);
  if (outcome === undefined) return 1;
  if (args.json) io.out.write(`${JSON.stringify(outcome)}\n`);
  else if (outcome.ok) io.out.write(`OK\nsigned by ${outcome.key_id} at ${outcome.signed_at}\n`);
  else io.out.write(`${outcome.reason}\n${outcome.detail}\n`);
  return outcome.ok ? 0 : 1;
}

async function verifyFile(conn: Connection, io: Pick<CliIo, 'err'>, args: AppVerifyArgs): Promise<VerifyOutcome | undefined> {
  let text: string;
  try {
    text = readFileSync(args.path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES' || code === 'ENOTDIR') return { ok: false, reason: 'unreadable', detail: `cannot read ${args.path} (${code})` };
    throw err;
  }
  const pinned = args.publicKey !== undefined ? oneKey(args.publicKey) : await brainKeys(conn, io);
  if (pinned === undefined) return undefined;
  const verdict = verifySignedManifestText(text, pinned);
  if (!verdict.ok) return { ok: false, reason: verdict.reason, detail: verdict.detail };
  const beside = join(dirname(args.path), 'manifest.json');
  if (existsSync(beside) && basename(args.path) !== 'manifest.json') {
    let manifest: unknown;
    try {
      manifest = readManifest(beside);
    } catch (err) {
      if (err instanceof ManifestFileError) return { ok: false, reason: 'manifest_mismatch', detail: err.message };
      throw err;
    }
    if (canonicalJson(manifest) !== canonicalJson(verdict.manifest)) return { ok: false, reason: 'manifest_mismatch', detail: `${beside} is not the manifest that was signed` };
  }
  const files = entryUncovered(verdict.manifest) ?? fileMismatch(dirname(args.path), verdict.manifest.files);
  if (files !== undefined) return { ok: false, reason: 'file_mismatch', detail: files };
  return { ok: true, key_id: verdict.keyId, signed_at: verdict.signedAt };
}

/**
 * A skill's manifest names its entry (an app's does not); signed, it must list the entry's digest, or the
 * signature does not cover the code and the brain refuses it (daemon/skills/skill-bundle.ts).
 */
function entryUncovered(manifest: Record<string, unknown>): string | undefined {
  const { entry, files } = manifest;
  if (typeof entry !== 'string' || (typeof files === 'object' && files !== null && entry in files)) return undefined;
  return `the manifest names the entry ${entry} but lists no digest of it in files, so the signature does not cover the code (sign a skill with svc skills sign <dir> --key-id <key_id>)`;
}

/** A signed skill's manifest lists its files' digests (docs/skills.md "Signing a skill"): the first file beside it that differs, if any. */
function fileMismatch(dir: string, files: unknown): string | undefined {
  if (typeof files !== 'object' || files === null) return undefined;
  for (const [name, digest] of Object.entries(files as Record<string, unknown>)) {
    if (name.includes('/') || name.includes('\\') || name.startsWith('.')) return `files lists ${JSON.stringify(name)}, which is not a plain file name`;
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(dir, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return `${name} is missing (the signed manifest lists it)`;
      throw err;
    }
    if (createHash('sha256').update(bytes).digest('hex') !== digest) return `${name} is not the file that was signed`;
  }
  return undefined;
}

/** The pinned-key lookup of --public-key: that key for whatever key id the envelope names. */
const oneKey = (publicKey: string): PinnedKeys => () => publicKey;

/** The brain's pinned keys, or undefined after saying why they could not be read. */
async function brainKeys(conn: Connection, err: Pick<CliIo, 'err'>): Promise<PinnedKeys | undefined> {
  try {
    const r = await callBrain<{ keys: { key_id: string; public_key: string }[] }>(conn, 'GET', '/api/publishers/keys');
    if (r.status !== 200) {
      reportError(err, r.status, r.body);
      return undefined;
    }
    const keys = new Map(r.body.keys.map((k) => [k.key_id, k.public_key]));
    return (keyId) => keys.get(keyId);
  } catch (e) {
    if (!(e instanceof BrainUnreachableError)) throw e;
    err.err.write(`svc app verify: the keys to trust come from the brain, and there is none at ${conn.url}; start it, or pass --public-key <base64>\n`);
    return undefined;
  }
}

export function registerAppCommands(prog: Sade, ctx: CommandContext): void {
  prog.command('app', 'Third-party apps: sign and verify a manifest').action(() => {
    ctx.out.write(APP_USAGE);
    ctx.exit(2);
  });
  prog
    .command('app sign <manifest_path>', 'Write manifest.signed.json beside the manifest, signed with the publisher key (~/.svc/publisher.key, made on first use)')
    .option('--key-id', 'The key id hosts pin the publisher key under (required)')
    .option('--json', 'Machine-readable output')
    .action((manifestPath: string, o: Opts) => {
      ctx.exit(appSign(ctx, { manifestPath, keyId: str(o['key-id']), home: ctx.conn(o).home, json: o.json === true }));
    });
  prog
    .command('app verify <signed_manifest_path>', 'Check manifest.signed.json against the publisher keys the brain trusts: OK (exit 0) or the reason (exit 1)')
    .option('--public-key', 'Trust this Ed25519 public key (base64) instead of asking the brain')
    .option('--json', 'Machine-readable output')
    .action(async (path: string, o: Opts) => ctx.exit(await appVerify(ctx.conn(o), ctx, { path, publicKey: str(o['public-key']), json: o.json === true })));
}
