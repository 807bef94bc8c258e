// A small file made once and never replaced (the brain id, the sync key): created exclusively as a hard
// link of a fully written and fsynced temp file, which fails when the name exists. Two callers racing on
// a new home agree on one content, and a crash never leaves a torn file. Mode 0600.
import { linkSync, readFileSync, rmSync } from 'node:fs';
import { writeTempBeside } from './atomic-write';

/** Writes `content` to `file` unless it exists; either way, the caller reads what is there afterwards. */
export function createOnce(file: string, content: string): void {
  const tmp = writeTempBeside(file, content, 0o600);
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** The file's text, or undefined when it does not exist (yet). */
export function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
