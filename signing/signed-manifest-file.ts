// `svc app sign` on disk (spec 4.14): read a manifest.json, sign it, and write manifest.signed.json next
// to it. The envelope is written atomically (temp file, fsync, rename, fsync of the folder: STYLE.md
// 11), so a crash leaves the old envelope or the new one, never a torn one. It is public (0644): it
// ships with the bundle.
import { closeSync, fchmodSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import type { SigningKey } from './ed25519';
import { SIGNED_MANIFEST_FILE, signManifest, type Manifest } from './signed-manifest';

/** A manifest file that cannot be signed: unreadable, not JSON, or not an object (signManifest refuses the rest). */
export class ManifestFileError extends Error {}

/** Signs the manifest at `manifestPath` with `key` and writes manifest.signed.json beside it; returns that path. */
export function signManifestFile(manifestPath: string, key: SigningKey, signedAt: Date = new Date()): string {
  if (basename(manifestPath) === SIGNED_MANIFEST_FILE) throw new ManifestFileError(`${manifestPath} is a signed envelope already; sign the manifest.json beside it`);
  const manifest = readManifest(manifestPath);
  const target = join(dirname(manifestPath), SIGNED_MANIFEST_FILE);
  writeAtomic(target, `${JSON.stringify(signManifest(manifest, key, signedAt), null, 2)}\n`);
  return target;
}

function readManifest(path: string): Manifest {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES') throw new ManifestFileError(`cannot read ${path} (${code})`);
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) throw new ManifestFileError(`${path} is not JSON: ${err.message}`);
    throw err;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ManifestFileError(`${path} is not a manifest: expected a JSON object`);
  return value as Manifest;
}

function writeAtomic(file: string, text: string): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomUUID()}.tmp`);
  const fd = openSync(tmp, 'wx', 0o644);
  try {
    fchmodSync(fd, 0o644);
    writeSync(fd, text);
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
