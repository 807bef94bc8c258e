// svc install <name> (spec 4.14, issue 16; docs/registry.md "Installing"): finds a published skill or
// daemon in the registry by skill_id or node_id (its registry UUID works too) and asks the local brain
// to install it from the registry's download URL, naming the sha256 and detached signature the
// registry holds for it. The brain downloads the tarball itself and checks both against the publisher
// keys it pins, so a registry cannot hand it other bytes than the signed ones:
//   a skill:  POST /api/skills/install   { url, sha256, signature: {alg, sha256, key_id, sig} }
//   a daemon: POST /api/daemons/install  (the same body; the brain stores it for the node-agent of node_id)
import type { Sade } from 'sade';
import { callBrain, BrainRefusedError, type Connection } from '../connection';
import type { ItemDetail } from '../../protocol/registry';
import { str, type CliIo, type CommandContext } from './key';
import { callRegistry, RegistryError, registryCommand, resolveRegistry, type Registry } from './registry';

type Opts = Record<string, unknown>;

export interface InstallArgs {
  readonly name: string;
  readonly registry: string | undefined;
  readonly json: boolean;
}

/** svc install: 0 installed, 1 unknown, unreviewed or refused. */
export async function install(io: CliIo, brain: Connection, args: InstallArgs): Promise<number> {
  return registryCommand(io, 'install', async () => {
    const registry = resolveRegistry(args.registry, io.env, brain);
    const item = await findItem(registry, args.name);
    if (!item.installable || item.current === null || item.current.download === null) {
      io.err.write(`svc install: ${item.name} is not installable until reviewed (nothing of it is published yet)\n`);
      return 1;
    }
    const current = item.current;
    const body = { url: `${registry.url}${current.download}`, sha256: current.sha256, signature: current.signature };
    const path = item.kind === 'skill' ? '/api/skills/install' : '/api/daemons/install';
    const r = await callBrain<unknown>(brain, 'POST', path, body, 120_000);
    if (r.status < 200 || r.status > 299) {
      io.err.write(`svc install: ${refusal(brain, `${item.kind} ${item.name} ${current.version}`, r.status, r.body)}${keyHint(r.body, current.key_id, current.public_key)}\n`);
      return 1;
    }
    io.out.write(args.json ? `${JSON.stringify({ item: { id: item.id, kind: item.kind, name: item.name, version: current.version, sha256: current.sha256, key_id: current.key_id }, installed: r.body })}\n` : describe(item));
    return 0;
  });
}

/** The item, or a RegistryError that says the name is unknown there. */
async function findItem(registry: Registry, name: string): Promise<ItemDetail> {
  try {
    return await callRegistry<ItemDetail>(registry, 'GET', `/items/${encodeURIComponent(name)}`);
  } catch (err) {
    if (err instanceof RegistryError && err.status === 404 && err.code === 'NOT_FOUND') throw new RegistryError(`no skill or daemon named ${JSON.stringify(name)} in the registry at ${registry.url} (\`svc marketplace search\` lists what is there)`, 404, 'NOT_FOUND', err.details);
    throw err;
  }
}

/** A refused signature (422 UNVERIFIED_MANIFEST: {error, reason, message}) or an error envelope, in one line. */
function refusal(brain: Connection, what: string, status: number, body: unknown): string {
  const unverified = body as { error?: unknown; reason?: unknown; message?: unknown } | null;
  if (typeof unverified?.error === 'string' && typeof unverified.message === 'string') return `${what}: refused (${String(unverified.reason)}): ${unverified.message}`;
  return BrainRefusedError.of(brain, what, status, body).message;
}

/** The reason of a refusal in either shape: an UNVERIFIED_MANIFEST body's, or an envelope's details. */
const reasonOf = (body: unknown): unknown => {
  const b = body as { reason?: unknown; error?: { details?: { reason?: unknown } } } | null;
  return b?.reason ?? (typeof b?.error === 'object' ? b.error.details?.reason : undefined);
};

/** When the brain does not pin the publisher's key: what to pin (the brain decides whom it trusts). */
function keyHint(body: unknown, keyId: string, publicKey: string): string {
  return reasonOf(body) === 'unknown_key' ? `\nthe brain does not trust publisher key ${keyId}; if you do: svc publisher trust ${keyId} ${publicKey}` : '';
}

function describe(item: ItemDetail): string {
  const v = item.current!;
  const where = item.kind === 'daemon' ? `; the node-agent registered as ${item.name} is the one that runs it` : '';
  return `installed ${item.kind} ${item.name} ${v.version} (sha256 ${v.sha256}, publisher key ${v.key_id})${where}\n`;
}

export function registerInstallCommands(prog: Sade, ctx: CommandContext): void {
  prog
    .command('install <name>', 'Install a published skill or daemon by skill_id or node_id (the registry UUID also resolves)')
    .option('--registry', 'Registry URL (default $SVC_REGISTRY_URL, else the local brain)')
    .option('--json', 'Machine-readable output')
    .action(async (name: string, o: Opts) => ctx.exit(await install(ctx, ctx.conn(o), { name, registry: str(o.registry), json: o.json === true })));
}
