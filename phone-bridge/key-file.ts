// Where the bridge keeps its node key: `<key dir>/<safe node_id>.key`, mode 0600, in a directory made
// 0700 (node-protocol.md "Pairing a node"; the same file the node-agent keeps, mesh/pair-key-file.ts).
// Written atomically — a temp file in the same directory, fsync, rename, fsync of the directory — so a
// phone that dies mid-write keeps the old key or the new one, never half of one.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { nodeKeyFileName } from '../mesh/pair-key-file';
import { isDeviceKey } from '../mesh/pair-token';

export const keyFilePath = (dir: string, nodeId: string): string => join(dir, nodeKeyFileName(nodeId));

const isMissing = (err: unknown): boolean => err instanceof Error && (err as NodeJS.ErrnoException).code === 'ENOENT';

export async function writeNodeKey(dir: string, nodeId: string, key: string): Promise<string> {
  if (!isDeviceKey(key)) throw new Error('the brain answered with something that is not a node key; nothing was written');
  if ((await mkdir(dir, { recursive: true, mode: 0o700 })) !== undefined) await chmod(dir, 0o700);
  const path = keyFilePath(dir, nodeId);
  const temp = join(dir, `.${nodeKeyFileName(nodeId)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const file = await open(temp, 'wx', 0o600);
    try {
      await file.writeFile(`${key}\n`, 'utf8');
      await file.sync();
    } finally {
      await file.close();
    }
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

/** The key kept for `nodeId`, or null when there is none (or the file holds something else). */
export async function readNodeKey(dir: string, nodeId: string): Promise<string | null> {
  try {
    const text = (await readFile(keyFilePath(dir, nodeId), 'utf8')).trim();
    return isDeviceKey(text) ? text : null;
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}

/**
 * The node ids with a key in `dir`. A node id the brain accepted always matches [A-Za-z0-9._:-]{1,128},
 * which the key file keeps unchanged, so the file name less `.key` is the id.
 */
export async function pairedNodeIds(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith('.key') && !f.startsWith('.')).map((f) => f.slice(0, -'.key'.length)).sort();
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
}
