// svc app sign (spec 4.14, 2.1, 5.1; docs/signing.md): sign an app manifest with this publisher's key.
//   svc app sign <manifest_path> --key-id <key_id> [--json]
// Writes manifest.signed.json beside the manifest with the publisher key at <home>/publisher.key
// (~/.svc unless --home or $SVC_HOME), made on first use. There is no --private-key flag: the key never
// travels on a command line. --key-id is the name hosts pin the public key under (vault namespace
// publisher_keys); the key's own derived id is the suggestion printed when it differs.
import type { Sade } from 'sade';
import { KEY_ID_PATTERN } from '../../protocol/signing';
import { CanonicalJsonError } from '../../signing/canonical-json';
import { loadOrCreatePublisherKey, PublisherKeyError } from '../../signing/publisher-key';
import { ManifestFileError, signManifestFile } from '../../signing/signed-manifest-file';
import { str, type CliIo, type CommandContext } from './key';

type Opts = Record<string, unknown>;

export const APP_USAGE = `usage: svc app sign <manifest_path> --key-id <key_id> [--json]
`;

const KEY_ID = new RegExp(KEY_ID_PATTERN);

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

export function registerAppCommands(prog: Sade, ctx: CommandContext): void {
  prog.command('app', 'Third-party apps: sign a manifest').action(() => {
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
}
