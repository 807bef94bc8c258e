// Signing a skill directory (docs/skills.md "Signing a skill"; `svc skills sign`, `svc publish
// --skill`). manifest.signed.json covers the manifest only (spec 2.1), so the manifest first gets the
// SHA-256 of each of the skill's files in `files` — the entry and every file it already lists — and
// the signature then covers the code through them. manifest.json is rewritten with those digests, then
// manifest.signed.json is written beside it; both atomically, both public (0644: they ship with the
// skill). The brain checks the same digests on install (daemon/skills/skill-bundle.ts).
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../mesh/atomic-write';
import { SKILL_FILE_PATTERN } from '../protocol/skills';
import type { SigningKey } from './ed25519';
import { ManifestFileError, readManifest } from './signed-manifest-file';
import { SIGNED_MANIFEST_FILE, signManifest, type Manifest } from './signed-manifest';

export const SKILL_MANIFEST_FILE = 'manifest.json';
const FILE_NAME = new RegExp(SKILL_FILE_PATTERN);

export interface SignedSkill {
  readonly manifestPath: string;
  readonly envelopePath: string;
  /** File name → hex SHA-256, as now in the manifest. */
  readonly files: Readonly<Record<string, string>>;
}

/** Adds the file digests to `<dir>/manifest.json` and signs it with `key`; a broken directory is a ManifestFileError. */
export function signSkillDir(dir: string, key: SigningKey, signedAt: Date = new Date()): SignedSkill {
  const manifestPath = join(dir, SKILL_MANIFEST_FILE);
  const manifest = readManifest(manifestPath);
  const files: Record<string, string> = {};
  for (const name of [...skillFiles(manifest)].sort()) files[name] = digestOf(dir, name);
  const updated: Manifest = { ...manifest, files };
  writeFileAtomic(manifestPath, `${JSON.stringify(updated, null, 2)}\n`, 0o644);
  const envelopePath = join(dir, SIGNED_MANIFEST_FILE);
  writeFileAtomic(envelopePath, `${JSON.stringify(signManifest(updated, key, signedAt), null, 2)}\n`, 0o644);
  return { manifestPath, envelopePath, files };
}

/** The entry and the files the manifest lists already. */
function skillFiles(manifest: Manifest): Set<string> {
  const entry = manifest.entry;
  if (typeof entry !== 'string' || !FILE_NAME.test(entry)) throw new ManifestFileError('the manifest names no entry file (entry: a plain file name such as main.js)');
  const names = new Set([entry]);
  const listed = manifest.files;
  if (listed !== undefined && (typeof listed !== 'object' || listed === null || Array.isArray(listed))) throw new ManifestFileError('the manifest\'s files is not an object of file name → digest');
  for (const name of Object.keys(listed ?? {})) {
    if (!FILE_NAME.test(name) || name === SKILL_MANIFEST_FILE || name === SIGNED_MANIFEST_FILE) throw new ManifestFileError(`files lists ${JSON.stringify(name)}: a plain file name right inside the skill, other than the manifests`);
    names.add(name);
  }
  return names;
}

function digestOf(dir: string, name: string): string {
  const path = join(dir, name);
  let stat;
  try {
    stat = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ManifestFileError(`${name} is missing from ${dir} (the manifest names it)`);
    throw err;
  }
  if (!stat.isFile()) throw new ManifestFileError(`${name} is not a regular file (links and folders are not part of a skill)`);
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}
