// The bundle a node-agent downloads (daemon-delivery.ts): an installed daemon's folder packed with
// signing/archive.ts packArchive, which sorts the files and fixes modes and times, so the same files
// give the same bytes. Loaded on the first delivery request (it brings the tar code with it).
// The folder was written by extractArchive (regular files and directories only); anything else found
// in it now is refused rather than followed.
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ArchiveError, packArchive, type ArchiveFile, type ArchiveLimits } from '../../signing/archive';

/** The files under `root`, paths `/`-separated and relative to it. */
async function filesUnder(root: string, limits: ArchiveLimits): Promise<ArchiveFile[]> {
  const out: ArchiveFile[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      const full = join(dir, name);
      const path = prefix === '' ? name : `${prefix}/${name}`;
      const stat = await lstat(full);
      if (stat.isDirectory()) await walk(full, path);
      else if (stat.isFile()) {
        if (out.length >= limits.maxEntries) throw new ArchiveError(`${root}: more than ${limits.maxEntries} files`);
        out.push({ path, bytes: new Uint8Array(await readFile(full)) });
      } else throw new ArchiveError(`${full}: neither a file nor a directory; an installed daemon holds only those`);
    }
  };
  await walk(root, '');
  return out;
}

/** The deterministic .tar.gz of the installed daemon at `path`. */
export async function packInstalledDaemon(path: string, limits: ArchiveLimits): Promise<Uint8Array> {
  return packArchive(await filesUnder(path, limits), limits);
}
