// The files of a skill about to be installed (docs/skills.md "Installing a skill"), gathered from a
// directory or a .tar.gz into memory and checked before anything is written: manifest.json against the
// schema, then the signature (manifest.signed.json over the manifest, the manifest's `files` digests
// over the code), or the unsigned decision. Only manifest.json, manifest.signed.json, the entry and
// the files the manifest lists belong to a skill; anything else in the directory or archive is left out.
import { lstat, readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { Cron } from 'croner';
import { manifestProblems, MAX_ENTRY_BYTES, MAX_MANIFEST_BYTES } from '../../skills/manifest';
import type { SkillManifest } from '../../protocol/skills';
import { canonicalJson, CanonicalJsonError } from '../../signing/canonical-json';
import { SIGNED_MANIFEST_FILE, verifySignedManifestText, type PinnedKeys } from '../../signing/signed-manifest';
import { AppError, UnverifiedManifestError } from '../kernel/errors';

export const MANIFEST_FILE = 'manifest.json';
/** A skill's files together (manifest, envelope, entry, listed files). */
export const MAX_BUNDLE_BYTES = 4 * 1024 * 1024;

/** File name → bytes, as found (nothing checked but sizes). */
export type Files = ReadonlyMap<string, Uint8Array>;

export interface CheckedBundle {
  readonly manifest: SkillManifest;
  /** Exactly the files to install. */
  readonly files: Files;
  /** The key id whose signature admitted it; null when unsigned. */
  readonly signedBy: string | null;
}

const invalid = (problems: string[]): AppError => new AppError('BAD_REQUEST', `not a skill: ${problems.slice(0, 5).join('; ')}`, { problems });

/** The skill's files of a directory: manifest.json first, then what it names; links and folders are refused. */
export async function filesOfDir(dir: string): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  const manifest = await readRegular(dir, MANIFEST_FILE, MAX_MANIFEST_BYTES);
  if (manifest === undefined) throw invalid([`${MANIFEST_FILE}: missing in ${dir}`]);
  out.set(MANIFEST_FILE, manifest);
  const parsed = parseManifest(manifest);
  for (const name of namesOf(parsed)) {
    if (name === MANIFEST_FILE) continue;
    const bytes = await readRegular(dir, name, MAX_ENTRY_BYTES);
    if (bytes !== undefined) out.set(name, bytes);
  }
  const signed = await readRegular(dir, SIGNED_MANIFEST_FILE, MAX_MANIFEST_BYTES);
  if (signed !== undefined) out.set(SIGNED_MANIFEST_FILE, signed);
  return out;
}

/** A file right inside `dir`, or undefined when missing; anything but a regular file within `max` bytes is refused. */
async function readRegular(dir: string, name: string, max: number): Promise<Uint8Array | undefined> {
  const path = join(dir, name);
  const stat = await lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
    throw err;
  });
  if (stat === null) return undefined;
  if (!stat.isFile()) throw invalid([`${name}: not a regular file (links and folders are refused)`]);
  if (stat.size > max) throw invalid([`${name}: larger than ${max} bytes`]);
  return readFile(path);
}

/** manifest.json's value, unchecked; not JSON is a bad request. */
function parseManifest(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
  } catch (err) {
    if (err instanceof SyntaxError) throw invalid([`${MANIFEST_FILE}: not JSON (${err.message})`]);
    throw err;
  }
}

/** The names a manifest makes part of the skill (entry and listed files), when it has them. */
function namesOf(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const { entry, files } = value as { entry?: unknown; files?: unknown };
  const names = typeof entry === 'string' ? [entry] : [];
  if (typeof files === 'object' && files !== null) names.push(...Object.keys(files));
  return names.filter((n) => /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(n));
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/**
 * Checks a skill's files: the manifest (400 with every problem), then its signature against the pinned
 * publisher keys, or the unsigned decision (422 UnverifiedManifest otherwise). Returns exactly the
 * files to install.
 */
export function checkBundle(found: Files, pinned: PinnedKeys, allowUnsigned: boolean): CheckedBundle {
  const manifestBytes = found.get(MANIFEST_FILE);
  if (manifestBytes === undefined) throw invalid([`${MANIFEST_FILE}: missing at the root`]);
  const value = parseManifest(manifestBytes);
  const problems = manifestProblems(value);
  if (problems.length > 0) throw invalid(problems);
  const manifest = value as SkillManifest;
  const schedules = scheduleProblems(manifest);
  if (schedules.length > 0) throw invalid(schedules);
  const files = new Map<string, Uint8Array>([[MANIFEST_FILE, manifestBytes]]);
  for (const name of new Set([manifest.entry, ...Object.keys(manifest.files ?? {})])) {
    const bytes = found.get(name);
    if (bytes === undefined) throw invalid([`${name}: missing (the manifest names it)`]);
    files.set(name, bytes);
  }
  // An archive's entries are bounded only by the archive's limits: hold them to what filesOfDir reads back at the next start.
  for (const [name, bytes] of files) {
    const max = name === MANIFEST_FILE ? MAX_MANIFEST_BYTES : MAX_ENTRY_BYTES;
    if (bytes.length > max) throw invalid([`${name}: larger than ${max} bytes`]);
  }
  const total = [...files.values()].reduce((n, b) => n + b.length, 0);
  if (total > MAX_BUNDLE_BYTES) throw invalid([`the skill's files are larger than ${MAX_BUNDLE_BYTES} bytes together`]);
  checkDigests(manifest, files);

  const envelope = found.get(SIGNED_MANIFEST_FILE);
  if (envelope === undefined) {
    if (!allowUnsigned) throw new UnverifiedManifestError('unsigned', `skill ${manifest.id} has no ${SIGNED_MANIFEST_FILE}; install it unsigned only on purpose (--allow-unsigned, audited)`);
    return { manifest, files, signedBy: null };
  }
  if (envelope.length > MAX_MANIFEST_BYTES) throw invalid([`${SIGNED_MANIFEST_FILE}: larger than ${MAX_MANIFEST_BYTES} bytes`]);
  const verdict = verifySignedManifestText(Buffer.from(envelope).toString('utf8'), pinned);
  if (!verdict.ok) throw new UnverifiedManifestError(verdict.reason, verdict.detail);
  if (!sameJson(verdict.manifest, value)) throw new UnverifiedManifestError('manifest_mismatch', `${MANIFEST_FILE} is not the manifest ${SIGNED_MANIFEST_FILE} signs`);
  if (manifest.files === undefined || !(manifest.entry in manifest.files)) {
    throw new UnverifiedManifestError('file_mismatch', `a signed skill lists the digest of its entry ${manifest.entry} (and of every other file) in the manifest's files, so the signature covers its code`);
  }
  files.set(SIGNED_MANIFEST_FILE, envelope);
  return { manifest, files, signedBy: verdict.keyId };
}

/** The longest every_seconds a Node timer holds; past it, setInterval runs every millisecond instead. */
export const MAX_EVERY_SECONDS = Math.floor(2_147_483_647 / 1000);

/**
 * Schedules that cannot be armed as written (the schema only bounds their form): a cron expression that
 * does not parse (arming it would throw), an every_seconds past what a timer holds.
 */
function scheduleProblems(manifest: SkillManifest): string[] {
  const out: string[] = [];
  manifest.triggers.forEach((trigger, i) => {
    if (trigger.type !== 'schedule') return;
    if (!('cron' in trigger)) {
      if (trigger.every_seconds > MAX_EVERY_SECONDS) out.push(`/triggers/${i}/every_seconds at most ${MAX_EVERY_SECONDS} (24.8 days); a cron expression schedules longer periods`);
      return;
    }
    try {
      new Cron(trigger.cron, { paused: true }).stop();
    } catch (err) {
      if (!(err instanceof TypeError || err instanceof RangeError)) throw err;
      out.push(`/triggers/${i}/cron ${err.message}`);
    }
  });
  return out;
}

/** Every listed file has the digest the manifest gives it. */
function checkDigests(manifest: SkillManifest, files: Files): void {
  for (const [name, digest] of Object.entries(manifest.files ?? {})) {
    if (sha256(files.get(name)!) !== digest) throw new UnverifiedManifestError('file_mismatch', `${name} is not the file the manifest's digest names`);
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch (err) {
    if (err instanceof CanonicalJsonError) return false;
    throw err;
  }
}
