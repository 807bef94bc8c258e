// Where a node (a node-agent board, a phone bridge) keeps its node key (node-protocol.md "Pairing a node"): `<key dir>/<safe node_id>.key`,
// mode 0600, in a directory this code creates 0700. Written atomically (a temp file in the same
// directory, fsync, rename, fsync of the directory: STYLE.md 11), so a power cut on the Pi leaves the
// old key or the new one, never half of one. A directory that already exists keeps its mode: it may
// be one the user chose (--key-dir /etc/...), and tightening it is theirs to decide.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { nodeKeyFileName } from './pair-key-file';
import { isDeviceKey } from './pair-token';

export const keyFilePath = (dir: string, nodeId: string): string => join(dir, nodeKeyFileName(nodeId));

const isMissing = (err: unknown): boolean => err instanceof Error && (err as NodeJS.ErrnoException).code === 'ENOENT';

/** Writes `key` for `nodeId` under `dir`; returns the file's path. */
export async function writeNodeKey(dir: string, nodeId: string, key: string): Promise<string> {
  if (!isDeviceKey(key)) throw new Error('the brain answered with something that is not a node key; nothing was written');
  const created = await mkdir(dir, { recursive: true, mode: 0o700 });
  if (created !== undefined) await chmod(dir, 0o700); // the umask may have widened or narrowed it
  const path = keyFilePath(dir, nodeId);
  const temp = join(dir, `.${nodeKeyFileName(nodeId)}.${randomBytes(6).toString('hex')}.tmp`);
  const file = await open(temp, 'wx', 0o600);
  try {
    await file.writeFile(`${key}\n`, 'utf8');
    await file.sync();
  } catch (err) {
    await file.close();
    await rm(temp, { force: true });
    throw err;
  }
  await file.close();
  try {
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  const directory = await open(dir, 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
  return path;
}

/** The node key kept for `nodeId`, or null when there is none (or the file holds something else). */
export async function readNodeKey(dir: string, nodeId: string): Promise<string | null> {
  try {
    const text = (await readFile(keyFilePath(dir, nodeId), 'utf8')).trim();
    return isDeviceKey(text) ? text : null;
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}

/** The key files in `dir` (names ending in .key; temp files end in .tmp), sorted; none when it does not exist. */
export async function listNodeKeys(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith('.key')).sort();
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
}

/**
 * The node ids with a key in `dir`. A node id the brain accepted always matches [A-Za-z0-9._:-]{1,128},
 * which the key file keeps unchanged, so the file name less `.key` is the id.
 */
export async function pairedNodeIds(dir: string): Promise<string[]> {
  return (await listNodeKeys(dir)).filter((f) => !f.startsWith('.')).map((f) => f.slice(0, -'.key'.length));
}
