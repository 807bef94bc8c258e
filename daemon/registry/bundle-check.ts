// What the registry checks of a publish before it stores anything (docs/registry.md "Publishing"): the
// key id is the publisher key's own (signing/ed25519.ts keyIdOf), the detached signature covers these
// bytes, the archive reads back under the limits (signing/archive.ts), and manifest.json at its root is
// a skill or daemon manifest whose entry is in the archive. A skill also carries manifest.signed.json:
// the same manifest signed by the same key, with `files` naming the digest of every other file, so a
// brain that installs it verifies the code the way it verifies an app (docs/signing.md).
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DaemonManifest, type ItemKind, type PublishBody } from '../../protocol/registry';
import { SkillManifest } from '../../protocol/skills';
import { readArchiveFiles, ArchiveError, type ArchiveLimits } from '../../signing/archive';
import { sha256Hex, verifyArtifact } from '../../signing/detached';
import { keyIdOf, publicKeyOf } from '../../signing/ed25519';
import { SIGNED_MANIFEST_FILE, verifySignedManifest } from '../../signing/signed-manifest';
import { canonicalJson } from '../../signing/canonical-json';
import { manifestProblems, PYTHON_REFUSED } from '../../skills/manifest';
import { AppError } from '../kernel/errors';

export const MANIFEST_FILE = 'manifest.json';

/** A publish that passed every check: what the registry stores about it. */
export interface CheckedBundle {
  readonly kind: ItemKind;
  /** skill_id or node_id. */
  readonly name: string;
  readonly version: string;
  readonly displayName: string;
  readonly description: string;
  readonly manifest: Record<string, unknown>;
  readonly bytes: Uint8Array;
  readonly sha256: string;
  readonly keyId: string;
}

const checkSkill = TypeCompiler.Compile(SkillManifest);
const checkDaemon = TypeCompiler.Compile(DaemonManifest);

/** A refused publish: 400 with details.reason (signature, archive, manifest) so a client can tell them apart. */
const refused = (reason: string, message: string, extra: Record<string, unknown> = {}): AppError => new AppError('BAD_REQUEST', message, { reason, ...extra });

/** Every check of a publish; a refusal is an AppError (400 with details.reason, or 413). */
export async function checkBundle(body: PublishBody, limits: ArchiveLimits): Promise<CheckedBundle> {
  const bytes = new Uint8Array(Buffer.from(body.archive, 'base64'));
  if (bytes.length > limits.maxTotalBytes) throw new AppError('PAYLOAD_TOO_LARGE', `the archive is ${bytes.length} bytes; this registry takes at most ${limits.maxTotalBytes}`, { reason: 'archive' });
  checkKey(body);
  const verdict = verifyArtifact(bytes, body.signature, (id) => (id === body.signature.key_id ? body.public_key : undefined));
  if (!verdict.ok) throw refused('signature', `the archive's signature is refused (${verdict.reason}): ${verdict.detail}`, { signature: verdict.reason });
  const files = await readFiles(bytes, limits);
  const manifest = parseManifest(files.get(MANIFEST_FILE));
  const described = body.kind === 'skill' ? checkSkillBundle(manifest, files, body) : checkDaemonBundle(manifest, files);
  return { kind: body.kind, ...described, manifest, bytes, sha256: verdict.sha256, keyId: verdict.keyId };
}

/** The key id must be the public key's own: nobody publishes under an id another key derives. */
function checkKey(body: PublishBody): void {
  if (publicKeyOf(body.public_key) === undefined) throw refused('signature', 'public_key is not an Ed25519 public key');
  const own = keyIdOf(body.public_key);
  if (body.signature.key_id !== own) throw refused('signature', `key_id ${body.signature.key_id} is not this public key's id (${own}); the registry knows publishers by their derived key id`);
}

export async function readFiles(bytes: Uint8Array, limits: ArchiveLimits): Promise<Map<string, Uint8Array>> {
  try {
    return await readArchiveFiles(bytes, limits);
  } catch (err) {
    if (err instanceof ArchiveError) throw refused('archive', `the archive is refused: ${err.message}`);
    throw err;
  }
}

function parseManifest(bytes: Uint8Array | undefined): Record<string, unknown> {
  if (bytes === undefined) throw refused('manifest', `the archive has no ${MANIFEST_FILE} at its root`);
  const value = parseJson(bytes, MANIFEST_FILE);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw refused('manifest', `${MANIFEST_FILE} is not a JSON object`);
  return value as Record<string, unknown>;
}

function parseJson(bytes: Uint8Array, file: string): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
  } catch (err) {
    if (err instanceof SyntaxError) throw refused('manifest', `${file} is not JSON: ${err.message}`);
    throw err;
  }
}

type Described = Pick<CheckedBundle, 'name' | 'version' | 'displayName' | 'description'>;

function checkSkillBundle(manifest: Record<string, unknown>, files: Map<string, Uint8Array>, body: PublishBody): Described {
  const problems = manifestProblems(manifest);
  if (problems.length > 0 || !checkSkill.Check(manifest)) throw refused('manifest', `${MANIFEST_FILE} is not a skill manifest: ${problems.slice(0, 5).join('; ')}`, { problems });
  if (!files.has(manifest.entry)) throw refused('manifest', `the entry ${manifest.entry} is not in the archive`);
  checkFileDigests(manifest.files, files);
  checkSignedManifest(manifest, files.get(SIGNED_MANIFEST_FILE), body);
  return { name: manifest.id, version: manifest.version, displayName: manifest.name, description: manifest.description };
}

/** `files` must name every file of the archive besides the two manifests, each with its digest, and nothing else. */
function checkFileDigests(listed: Record<string, string> | undefined, files: Map<string, Uint8Array>): void {
  if (listed === undefined) throw refused('manifest', `a published skill's ${MANIFEST_FILE} lists its files with their sha256 (\`files\`; svc publish fills it in)`);
  const others = [...files.keys()].filter((p) => p !== MANIFEST_FILE && p !== SIGNED_MANIFEST_FILE);
  for (const path of others) {
    if (listed[path] === undefined) throw refused('manifest', `${path} is in the archive but not in the manifest's files`);
    if (listed[path] !== sha256Hex(files.get(path)!)) throw refused('manifest', `${path}: its sha256 is not the one the manifest lists`);
  }
  for (const path of Object.keys(listed)) if (!files.has(path)) throw refused('manifest', `${path} is in the manifest's files but not in the archive`);
}

function checkSignedManifest(manifest: Record<string, unknown>, envelopeBytes: Uint8Array | undefined, body: PublishBody): void {
  if (envelopeBytes === undefined) throw refused('manifest', `a published skill carries ${SIGNED_MANIFEST_FILE} (svc publish writes it)`);
  const verdict = verifySignedManifest(parseJson(envelopeBytes, SIGNED_MANIFEST_FILE), (id) => (id === body.signature.key_id ? body.public_key : undefined));
  if (!verdict.ok) throw refused('signature', `${SIGNED_MANIFEST_FILE} is refused (${verdict.reason}): ${verdict.detail}`, { signature: verdict.reason });
  if (canonicalJson(verdict.manifest) !== canonicalJson(manifest)) throw refused('manifest', `${SIGNED_MANIFEST_FILE} signs another manifest than ${MANIFEST_FILE}`);
}

/** The daemon manifest of an archive's files, checked, with what it says about itself (also the brain's install, daemon-installs.ts). */
export function checkDaemonFiles(files: Map<string, Uint8Array>): Described & { manifest: DaemonManifest } {
  const manifest = parseManifest(files.get(MANIFEST_FILE));
  return { ...checkDaemonBundle(manifest, files), manifest: manifest as DaemonManifest };
}

function checkDaemonBundle(manifest: Record<string, unknown>, files: Map<string, Uint8Array>): Described {
  const entry = manifest.entry;
  if (typeof entry === 'string' && entry.toLowerCase().endsWith('.py')) throw refused('manifest', `/entry ${PYTHON_REFUSED}`);
  if (!checkDaemon.Check(manifest)) {
    const problems = [...checkDaemon.Errors(manifest)].slice(0, 5).map((e) => `${e.path || '/'} ${e.message}`);
    throw refused('manifest', `${MANIFEST_FILE} is not a daemon manifest: ${problems.join('; ')}`, { problems });
  }
  if (!files.has(manifest.entry)) throw refused('manifest', `the entry ${manifest.entry} is not in the archive`);
  return { name: manifest.node_id, version: manifest.version, displayName: manifest.brand?.name ?? manifest.node_id, description: manifest.description ?? '' };
}
