// Files written so that a crash leaves either the old content or the new, never a torn file (STYLE.md
// 11): a temp file beside the target, written and fsynced, then renamed over it, then the folder
// fsynced. The mode is set on the open temp file, so neither the umask nor a temp file left by an
// earlier crash decides it (issue 8 §5). Here, below every layer that writes files (the brain through
// daemon/fs, signing/, mesh/create-once.ts), so there is one of it.
import { randomUUID } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Writes `data` to a new temp file beside `file` with exactly `mode`, fsynced; returns its path. */
export function writeTempBeside(file: string, data: string | Uint8Array, mode: number): string {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomUUID()}.tmp`);
  const fd = openSync(tmp, 'wx', mode);
  try {
    fchmodSync(fd, mode);
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return tmp;
}

/** Replaces `file` with `data` atomically and durably; the file gets exactly `mode`. */
export function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o600): void {
  const tmp = writeTempBeside(file, data, mode);
  try {
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  const dir = openSync(dirname(file), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
