// Where the node-agent keeps the daemon the brain delivered (docs/node-agent.md "Daemons"):
//   <state dir>/daemons/<node_id>/<version>/   the extracted bundle
//   <state dir>/daemons/<node_id>/held.json    which version is held (the brain's offer, as checked)
// A bundle is extracted into a staging folder beside them (.staging-…) and renamed into place, then
// held.json is replaced (temp file, fsync, rename: STYLE.md 11), so a power cut leaves either the old
// daemon or the new one, never half of one. Older versions and stale staging folders are removed after.
// The archive reader (signing/archive.ts, with the tar code) is loaded on the first install.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { DaemonOffer } from '../protocol/daemons';
import { SEMVER_PATTERN } from '../protocol/skills';
import type { ArchiveLimits } from '../signing/archive';

export const HELD_FILE = 'held.json';
const STAGING_PREFIX = '.staging-';
const SEMVER = new RegExp(SEMVER_PATTERN);

/** The daemon folder of a node under the state directory. */
export const daemonRoot = (stateDir: string, nodeId: string): string => join(stateDir, 'daemons', nodeId);

export interface HeldDaemon {
  readonly offer: DaemonOffer;
  /** The extracted bundle. */
  readonly path: string;
}

/** A bundle the archive reader refused (its message says which entry and why). */
export class BundleRefused extends Error {}

export class DaemonStore {
  constructor(
    private readonly root: string,
    private readonly limits?: ArchiveLimits,
  ) {}

  /** The daemon held now, or null (none yet, or a held.json that does not parse: fetched again). */
  async held(): Promise<HeldDaemon | null> {
    let text: string;
    try {
      text = await readFile(join(this.root, HELD_FILE), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      if (err instanceof SyntaxError) return null;
      throw err;
    }
    if (!Value.Check(DaemonOffer, parsed) || !SEMVER.test(parsed.version)) return null;
    return { offer: parsed, path: join(this.root, parsed.version) };
  }

  /**
   * Extracts `bytes` (already checked against offer.sha256) as the held daemon. Rejects with
   * BundleRefused when the archive reader refuses the bundle; nothing held changes then.
   */
  async install(offer: DaemonOffer, bytes: Uint8Array): Promise<HeldDaemon> {
    if (!SEMVER.test(offer.version)) throw new Error(`version ${JSON.stringify(offer.version)} is not a semantic version`);
    await mkdir(this.root, { recursive: true, mode: 0o755 });
    await this.removeStaging();
    const staging = join(this.root, `${STAGING_PREFIX}${offer.version}-${randomBytes(4).toString('hex')}`);
    const archive = await import('../signing/archive');
    try {
      await archive.extractArchive(bytes, staging, this.limits);
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      if (err instanceof archive.ArchiveError) throw new BundleRefused(`the bundle is refused: ${err.message}`);
      throw err;
    }
    const path = join(this.root, offer.version);
    await rm(path, { recursive: true, force: true });
    await rename(staging, path);
    await this.writeHeld(offer);
    await this.removeOthers(offer.version);
    return { offer, path };
  }

  private async writeHeld(offer: DaemonOffer): Promise<void> {
    const file = join(this.root, HELD_FILE);
    const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
    const handle = await open(temp, 'w', 0o644);
    try {
      await handle.writeFile(`${JSON.stringify(offer)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  }

  private async removeStaging(): Promise<void> {
    for (const name of await readdir(this.root)) if (name.startsWith(STAGING_PREFIX)) await rm(join(this.root, name), { recursive: true, force: true });
  }

  /** Every version folder but `keep` (and leftover temp files of held.json). */
  private async removeOthers(keep: string): Promise<void> {
    for (const name of await readdir(this.root)) {
      if (name === keep || name === HELD_FILE) continue;
      if (SEMVER.test(name) || name.endsWith('.tmp')) await rm(join(this.root, name), { recursive: true, force: true });
    }
  }
}
