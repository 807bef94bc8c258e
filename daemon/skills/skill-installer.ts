// Installing and removing skills on disk (docs/skills.md "Installing a skill"). The source is a skill
// directory or a .tar.gz on the brain's machine (an absolute path), or a .tar.gz at a URL (https; http
// only to loopback, where a household registry on the same machine answers). An archive may come with
// its expected sha256 and a detached publisher signature (a registry download), both checked before it
// is opened. The files are checked in memory (skill-bundle.ts), written to a staging directory inside
// <home>/skills, then renamed into place: <home>/skills/<id> is always a whole skill, the old version or
// the new. An install that did not finish leaves a staging directory, removed at the next start.
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, writeFile, lstat, readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { verifyArtifact, sha256Hex } from '../../signing/detached';
import type { PinnedKeys } from '../../signing/signed-manifest';
import type { SkillInstallBody } from '../../protocol/skills';
import { AppError, UnverifiedManifestError } from '../kernel/errors';
import { lazyModule } from '../kernel/lazy-module';
import { checkBundle, filesOfDir, MAX_BUNDLE_BYTES, type CheckedBundle } from './skill-bundle';

/** An archive is at most this large (compressed), by path or by URL. */
export const MAX_ARCHIVE_BYTES = 8 * 1024 * 1024;
export const DOWNLOAD_TIMEOUT_MS = 30_000;
const STAGING = '.staging-';
/** `.old-<id>.<uuid>`: the version an upgrade replaces, between its two renames. */
const OLD = '.old-';
const REMOVED = '.removed-';

export type Fetch = (url: string, init: { signal: AbortSignal; redirect: 'error' }) => Promise<Response>;

export interface InstallerDeps {
  /** <home>/skills */
  readonly dir: string;
  readonly pinned: PinnedKeys;
  readonly fetch?: Fetch;
}

export type SkillSource = { kind: 'path'; path: string } | { kind: 'url'; url: string };

const bad = (message: string, details?: unknown): AppError => new AppError('BAD_REQUEST', message, details);

/** The archive reader (and the tar package under it), loaded by the first archive install, not at start. */
const archive = lazyModule(() => import('../../signing/archive'));

export class SkillInstaller {
  constructor(private readonly deps: InstallerDeps) {}

  /**
   * Cleans up after an interrupted install, upgrade or removal; returns the names it dealt with. An
   * upgrade cut between its two renames left the old version aside and no `<id>`: it is put back (the
   * install record still names the old version, which is written only after the new one is in place).
   */
  async sweep(): Promise<string[]> {
    await mkdir(this.deps.dir, { recursive: true, mode: 0o700 });
    const names = await readdir(this.deps.dir);
    const left = names.filter((n) => n.startsWith(STAGING) || n.startsWith(OLD) || n.startsWith(REMOVED));
    for (const name of left) {
      const id = name.startsWith(OLD) ? name.slice(OLD.length, name.lastIndexOf('.')) : '';
      if (id !== '' && !names.includes(id)) {
        await rename(join(this.deps.dir, name), this.dirOf(id));
        names.push(id);
      } else await rm(join(this.deps.dir, name), { recursive: true, force: true });
    }
    return left;
  }

  /** The installed skill directories (names are skill ids). */
  async installedDirs(): Promise<string[]> {
    return (await readdir(this.deps.dir, { withFileTypes: true })).filter((d) => d.isDirectory() && !d.name.startsWith('.')).map((d) => d.name);
  }

  dirOf(id: string): string {
    return join(this.deps.dir, id);
  }

  /** The checked files of a request's source (nothing written yet). */
  async check(body: SkillInstallBody): Promise<CheckedBundle & { source: SkillSource }> {
    const source = sourceOf(body);
    const found = source.kind === 'path' ? await this.fromPath(source.path, body) : await this.fromArchive(await this.download(source.url), body);
    return { ...checkBundle(found, this.deps.pinned, body.allow_unsigned === true), source };
  }

  /** Writes a checked skill into <dir>/<id>, replacing what was there in one rename. */
  async place(bundle: CheckedBundle): Promise<void> {
    const staging = join(this.deps.dir, `${STAGING}${randomUUID()}`);
    await mkdir(staging, { mode: 0o700 });
    for (const [name, bytes] of bundle.files) await writeFile(join(staging, name), bytes, { mode: 0o600, flag: 'wx' });
    const target = this.dirOf(bundle.manifest.id);
    const old = join(this.deps.dir, `${OLD}${bundle.manifest.id}.${randomUUID()}`);
    const had = await rename(target, old).then(
      () => true,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return false;
        throw err;
      },
    );
    await rename(staging, target);
    if (had) await rm(old, { recursive: true, force: true });
  }

  async remove(id: string): Promise<void> {
    const old = join(this.deps.dir, `${REMOVED}${randomUUID()}`);
    await rename(this.dirOf(id), old).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    await rm(old, { recursive: true, force: true });
  }

  private async fromPath(path: string, body: SkillInstallBody): Promise<ReadonlyMap<string, Uint8Array>> {
    if (!isAbsolute(path)) throw bad(`path must be absolute (it is read by the brain, not by the caller): ${path}`);
    const stat = await lstat(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') throw new AppError('NOT_FOUND', `nothing at ${path}`, { path });
      if (err.code === 'EACCES') throw bad(`the brain may not read ${path}`, { path });
      throw err;
    });
    if (stat.isDirectory()) {
      if (body.sha256 !== undefined || body.signature !== undefined) throw bad('sha256 and signature describe an archive; this path is a directory');
      return filesOfDir(path);
    }
    if (!stat.isFile()) throw bad(`${path} is neither a skill directory nor a .tar.gz`);
    if (stat.size > MAX_ARCHIVE_BYTES) throw bad(`${path} is larger than ${MAX_ARCHIVE_BYTES} bytes`);
    return this.fromArchive(await readFile(path), body);
  }

  /** The files of an archive whose digest and detached signature (when given) hold. */
  private async fromArchive(bytes: Uint8Array, body: SkillInstallBody): Promise<ReadonlyMap<string, Uint8Array>> {
    if (body.sha256 !== undefined && sha256Hex(bytes) !== body.sha256) throw new UnverifiedManifestError('digest_mismatch', 'the archive is not the one whose sha256 was given');
    if (body.signature !== undefined) {
      const verdict = verifyArtifact(bytes, body.signature, this.deps.pinned);
      if (!verdict.ok) throw new UnverifiedManifestError(verdict.reason, verdict.detail);
    }
    const { readArchiveFiles, ArchiveError } = await archive();
    try {
      return await readArchiveFiles(bytes, { maxEntries: 64, maxEntryBytes: MAX_BUNDLE_BYTES, maxTotalBytes: MAX_BUNDLE_BYTES * 2, maxPathLength: 200 });
    } catch (err) {
      if (err instanceof ArchiveError) throw bad(`the archive is refused: ${err.message}`);
      throw err;
    }
  }

  private async download(raw: string): Promise<Uint8Array> {
    const url = checkUrl(raw);
    const fetchFn: Fetch = this.deps.fetch ?? fetch;
    let response: Response;
    try {
      response = await fetchFn(url.toString(), { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS), redirect: 'error' });
    } catch (err) {
      throw new AppError('DOWNLOAD_FAILED', `could not download ${url.toString()}: ${(err as Error).message}`, { url: url.toString() }, 502);
    }
    if (!response.ok) throw new AppError('DOWNLOAD_FAILED', `${url.toString()} answered ${response.status}`, { url: url.toString(), status: response.status }, 502);
    return readBounded(response, MAX_ARCHIVE_BYTES, url.toString());
  }
}

function sourceOf(body: SkillInstallBody): SkillSource {
  if ((body.path === undefined) === (body.url === undefined)) throw bad('give exactly one of path (on the brain\'s machine) and url');
  return body.path !== undefined ? { kind: 'path', path: body.path } : { kind: 'url', url: body.url! };
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** https anywhere; http only to loopback (a registry on this machine). */
export function checkUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (err) {
    if (err instanceof TypeError) throw bad(`not a URL: ${raw}`);
    throw err;
  }
  const loopback = LOOPBACK.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw bad(`a skill is downloaded over https (plain http only from this machine): ${raw}`);
  if (url.username !== '' || url.password !== '') throw bad('a download URL carries no credentials');
  return url;
}

async function readBounded(response: Response, max: number, what: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > max) throw bad(`${what} is larger than ${max} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body === null) return new Uint8Array();
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > max) throw bad(`${what} is larger than ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
