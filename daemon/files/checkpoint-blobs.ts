// Content-addressed blobs of the checkpoints: $SVC_HOME/checkpoints/blobs/<sha256 of the content>.
// Written atomically and fsynced before the change that needs them is recorded (files 0600, folder
// 0700); the same content is stored once. Blobs no row references are removed by gc().
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write';

export const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

const BLOB_NAME = /^[0-9a-f]{64}$/;

/** Content larger than this is not kept; the change that would need it is not revertible. */
export const BLOB_CAP_BYTES = 16 * 1024 * 1024;

/**
 * What identifies a file's content for drift checks: sha256 of the content up to the blob cap; past it
 * (only a moved or deleted big file) the inode, size and mtime, so a multi-gigabyte file is never read
 * into memory. The two forms never collide (a sha256 has no colon).
 */
export function fingerprint(path: string, st: Stats): string {
  if (st.size <= BLOB_CAP_BYTES) return sha256(readFileSync(path));
  return `stat:${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

export class BlobStore {
  constructor(readonly dir: string) {}

  put(content: Uint8Array): string {
    const hash = sha256(content);
    const file = join(this.dir, hash);
    if (!existsSync(file)) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileAtomic(file, content, 0o600);
    }
    return hash;
  }

  /** The content of a blob, checked against its name (a damaged blob is never restored). */
  get(hash: string): Buffer {
    if (!BLOB_NAME.test(hash)) throw new Error(`not a blob name: ${hash}`);
    const content = readFileSync(join(this.dir, hash));
    if (sha256(content) !== hash) throw new Error(`checkpoint blob ${hash} is damaged (its content no longer matches its name)`);
    return content;
  }

  has(hash: string): boolean {
    return BLOB_NAME.test(hash) && existsSync(join(this.dir, hash));
  }

  /** Removes every blob (and temp file left by a crash) not in `keep`; returns how many. */
  gc(keep: ReadonlySet<string>): number {
    if (!existsSync(this.dir)) return 0;
    let removed = 0;
    for (const name of readdirSync(this.dir)) {
      if (keep.has(name)) continue;
      rmSync(join(this.dir, name), { force: true });
      removed++;
    }
    return removed;
  }
}
