// svc publish --skill <dir> | --daemon <dir> (spec 4.14, issue 16; docs/registry.md "Publishing"):
// reads the bundle's manifest.json, packs a deterministic .tar.gz (signing/archive.ts), signs it with
// the publisher key (<home>/publisher.key, the one `svc app sign` uses) and sends it to the registry,
// where it lands submitted and private until a reviewer approves it.
//
// A skill (skills/manifest.ts readSkillDir checks the manifest and its entry) is signed in place first,
// as `svc skills sign` does: manifest.json gets `files`, the sha256 of the entry and of each file it
// lists, and manifest.signed.json signs it (spec 2.1), so the installing brain verifies the code as it
// verifies an app. A daemon is manifest.json (protocol/registry.ts DaemonManifest) and every file
// below the folder, dot-files left out.
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Sade } from 'sade';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DaemonManifest, type ItemKind, type PublishBody, type PublishResult } from '../../protocol/registry';
import { ArchiveError, packArchive, type ArchiveFile } from '../../signing/archive';
import { signArtifact } from '../../signing/detached';
import { loadOrCreatePublisherKey, PublisherKeyError, type PublisherKey } from '../../signing/publisher-key';
import { SIGNED_MANIFEST_FILE } from '../../signing/signed-manifest';
import { ManifestFileError } from '../../signing/signed-manifest-file';
import { signSkillDir } from '../../signing/skill-signature';
import { PYTHON_REFUSED, readSkillDir } from '../../skills/manifest';
import { str, type CliIo, type CommandContext } from './key';
import { callRegistry, registryCommand, resolveRegistry } from './registry';

type Opts = Record<string, unknown>;

export const PUBLISH_USAGE = `usage: svc publish --skill <dir> | --daemon <dir> [--registry <url>] [--json]
  exactly one of --skill and --daemon; the folder holds manifest.json and its entry
`;
const MANIFEST = 'manifest.json';
/** Files a bundle folder may hold that are not part of what is published. */
const isHidden = (name: string): boolean => name.startsWith('.');

/** A bundle that cannot be published; the message says what to fix. */
export class BundleError extends Error {}

export interface PublishArgs {
  readonly skill: string | undefined;
  readonly daemon: string | undefined;
  readonly registry: string | undefined;
  readonly json: boolean;
}

/** svc publish: 0 submitted, 1 the bundle, key or registry refused it, 2 bad invocation. */
export async function publish(io: CliIo, home: string, brain: Parameters<typeof resolveRegistry>[2], args: PublishArgs): Promise<number> {
  const chosen = [args.skill, args.daemon].filter((d) => d !== undefined);
  if (chosen.length !== 1) {
    io.err.write(`svc publish: ${chosen.length === 0 ? 'one of --skill <dir> or --daemon <dir> is required' : '--skill and --daemon exclude each other'}\n${PUBLISH_USAGE}`);
    return 2;
  }
  const kind: ItemKind = args.skill !== undefined ? 'skill' : 'daemon';
  return registryCommand(io, 'publish', async () => {
    let body: PublishBody;
    try {
      const key = loadOrCreatePublisherKey(home);
      const files = kind === 'skill' ? await skillFiles(args.skill!, key) : daemonFiles(args.daemon!);
      const archive = packArchive(files);
      body = { kind, archive: Buffer.from(archive).toString('base64'), signature: signArtifact(archive, key), public_key: key.publicKey };
    } catch (err) {
      if (err instanceof BundleError || err instanceof ArchiveError || err instanceof PublisherKeyError || err instanceof ManifestFileError) {
        io.err.write(`svc publish: ${err.message}\n`);
        return 1;
      }
      throw err;
    }
    const registry = resolveRegistry(args.registry, io.env, brain);
    const result = await callRegistry<PublishResult>(registry, 'POST', '/items', body);
    io.out.write(args.json ? `${JSON.stringify(result)}\n` : describe(result, registry.url));
    return 0;
  });
}

function describe(r: PublishResult, url: string): string {
  return [
    `submitted ${r.kind} ${r.name} ${r.version} to ${url}`,
    `id: ${r.id}`,
    `submission: ${r.submission_id}`,
    `state: ${r.state}`,
    `visibility: ${r.visibility}`,
    'it is not listed, downloadable or installable until a reviewer approves it',
    '',
  ].join('\n');
}

// ── Skills ─────────────────────────────────────────────────────────────────────────────────────────
/**
 * The skill folder signed in place (signing/skill-signature.ts, as `svc skills sign`: manifest.json
 * gets the digests of the entry and the files it lists, manifest.signed.json is written beside it),
 * then those files: what the manifest does not name is not part of the skill.
 */
async function skillFiles(dir: string, key: PublisherKey): Promise<ArchiveFile[]> {
  const read = await readSkillDir(dir);
  if (!read.ok) throw new BundleError(`${join(dir, MANIFEST)} is not a publishable skill:\n  ${read.problems.join('\n  ')}`);
  const signed = signSkillDir(dir, key);
  return [MANIFEST, SIGNED_MANIFEST_FILE, ...Object.keys(signed.files)].map((path) => ({ path, bytes: new Uint8Array(readFileSync(join(dir, path))) }));
}

// ── Daemons ────────────────────────────────────────────────────────────────────────────────────────
const checkDaemon = TypeCompiler.Compile(DaemonManifest);

function daemonFiles(dir: string): ArchiveFile[] {
  const manifest = readJson(join(dir, MANIFEST));
  const entry = (manifest as { entry?: unknown }).entry;
  if (typeof entry === 'string' && entry.toLowerCase().endsWith('.py')) throw new BundleError(`${join(dir, MANIFEST)}: /entry ${PYTHON_REFUSED}`);
  if (!checkDaemon.Check(manifest)) {
    const problems = [...checkDaemon.Errors(manifest)].slice(0, 10).map((e) => `${e.path || '/'} ${e.message}`);
    throw new BundleError(`${join(dir, MANIFEST)} is not a daemon manifest (node_id, version, entry; brand.name optional):\n  ${problems.join('\n  ')}`);
  }
  const files = walk(dir, '');
  if (!files.some((f) => f.path === manifest.entry)) throw new BundleError(`${join(dir, manifest.entry)}: the entry the manifest names is missing`);
  return files;
}

/** Every file below `dir` (relative paths), dot-files and dot-folders left out; a link is refused. */
function walk(dir: string, prefix: string): ArchiveFile[] {
  const out: ArchiveFile[] = [];
  for (const name of readdirSync(join(dir, prefix)).sort()) {
    if (isHidden(name)) continue;
    const rel = prefix === '' ? name : `${prefix}/${name}`;
    const stat = lstatSync(join(dir, rel));
    if (stat.isDirectory()) out.push(...walk(dir, rel));
    else if (stat.isFile()) out.push({ path: rel, bytes: new Uint8Array(readFileSync(join(dir, rel))) });
    else throw new BundleError(`${join(dir, rel)}: only plain files and folders are published (no links, sockets or devices)`);
  }
  return out;
}

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') throw new BundleError(`${path}: missing (a bundle has manifest.json at its root)`);
    throw err;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    if (err instanceof SyntaxError) throw new BundleError(`${path} is not JSON: ${err.message}`);
    throw err;
  }
}


export function registerPublishCommands(prog: Sade, ctx: CommandContext): void {
  prog
    .command('publish', 'Publish a skill or daemon folder to a marketplace registry (submitted and private until reviewed)')
    .option('--skill', 'A skill folder: manifest.json and its entry')
    .option('--daemon', 'A daemon folder: manifest.json (node_id, version, entry) and its files')
    .option('--registry', 'Registry URL (default $SVC_REGISTRY_URL, else the local brain)')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => {
      const conn = ctx.conn(o);
      ctx.exit(await publish(ctx, conn.home, conn, { skill: str(o.skill), daemon: str(o.daemon), registry: str(o.registry), json: o.json === true }));
    });
}
