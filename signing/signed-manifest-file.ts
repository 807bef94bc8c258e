// `svc app sign` on disk (spec 4.14): read a manifest.json, sign it, and write manifest.signed.json next
// to it. The envelope is written atomically (mesh/atomic-write.ts), so a crash leaves the old envelope
// or the new one, never a torn one. It is public (0644): it ships with the bundle.
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { writeFileAtomic } from '../mesh/atomic-write';
import type { SigningKey } from './ed25519';
import { SIGNED_MANIFEST_FILE, signManifest, type Manifest } from './signed-manifest';

/** A manifest file that cannot be signed: unreadable, not JSON, or not an object (signManifest refuses the rest). */
export class ManifestFileError extends Error {}

/** Signs the manifest at `manifestPath` with `key` and writes manifest.signed.json beside it; returns that path. */
export function signManifestFile(manifestPath: string, key: SigningKey, signedAt: Date = new Date()): string {
  if (basename(manifestPath) === SIGNED_MANIFEST_FILE) throw new ManifestFileError(`${manifestPath} is a signed envelope already; sign the manifest.json beside it`);
  const manifest = readManifest(manifestPath);
  const target = join(dirname(manifestPath), SIGNED_MANIFEST_FILE);
  writeFileAtomic(target, `${JSON.stringify(signManifest(manifest, key, signedAt), null, 2)}\n`, 0o644);
  return target;
}

/** A manifest file's JSON object; unreadable, not JSON or not an object is a ManifestFileError. */
export function readManifest(path: string): Manifest {
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
