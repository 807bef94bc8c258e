// Config and secret files are written atomically (STYLE.md 11): temp file, fsync, rename, fsync dir.
// A crash leaves either the old file or the new one, never a torn one. The mode is set on the open
// file, so neither the umask nor a temp file left by a crash decides it (issue 8 §5).
import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, writeSync, rmSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';

export function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o600): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w', mode);
  try {
    fchmodSync(fd, mode);
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
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
