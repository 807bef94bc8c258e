// manifest.signed.json (spec 2.1, 5.1; docs/signing.md): an app or skill manifest with the publisher's
// Ed25519 signature over its RFC 8785 canonical JSON. The verifier re-derives the canonical JSON, so
// reordered keys and whitespace still verify while any change of a value does not, and it trusts only
// the key pinned for the envelope's key_id (vault namespace publisher_keys): the public_key the envelope
// carries must be that key, never a substitute for it.
//
// The signature covers the manifest alone, as the spec says; key_id, public_key and signed_at are
// checked against the pin or are informational. Other uses of a publisher key sign a message with a
// context line first (signing/ed25519.ts), so none of those signatures verifies as a manifest's.
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { SIGNING_ALG, SignedManifestEnvelope, type ManifestRefusalReason } from '../protocol/signing';
import { canonicalJson, CanonicalJsonError } from './canonical-json';
import { decodeRaw, publicKeyOf, rawPublicKey, signMessage, SigningKeyError, verifyMessage, type SigningKey } from './ed25519';

/** The name of the envelope file, next to manifest.json. */
export const SIGNED_MANIFEST_FILE = 'manifest.signed.json';

/** A manifest: a JSON object. */
export type Manifest = Record<string, unknown>;

/** The pinned public key (raw base64) for a key id, or undefined when the host pins none. */
export type PinnedKeys = (keyId: string) => string | undefined;

export type ManifestVerdict =
  | { readonly ok: true; readonly manifest: Manifest; readonly keyId: string; readonly signedAt: string }
  | { readonly ok: false; readonly reason: ManifestRefusalReason; readonly detail: string };

const checkEnvelope = TypeCompiler.Compile(SignedManifestEnvelope);

/** The bytes a manifest signature covers: the canonical JSON of the manifest, nothing before or after it. */
export const manifestMessage = (manifest: Manifest): string => canonicalJson(manifest);

/** The envelope of `manifest` signed by `key`. A manifest JSON cannot represent is a CanonicalJsonError. */
export function signManifest(manifest: Manifest, key: SigningKey, signedAt: Date = new Date()): SignedManifestEnvelope {
  if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) throw new CanonicalJsonError('', 'a manifest is a JSON object');
  const message = manifestMessage(manifest);
  return {
    // What was signed, exactly: the canonical form read back (e.g. -0 is 0 there).
    manifest: JSON.parse(message) as Manifest,
    signature: signMessage(key.privateKey, message),
    public_key: rawPublicKey(key.privateKey),
    key_id: key.keyId,
    signed_at: signedAt.toISOString(),
    alg: SIGNING_ALG,
  };
}

/**
 * Whether `envelope` (parsed JSON, untrusted) is a manifest signed by the key pinned for its key_id.
 * Nothing in the envelope makes this throw; a pinned key that is not an Ed25519 key is a SigningKeyError
 * (the host's own store is damaged, which no envelope should paper over).
 */
export function verifySignedManifest(envelope: unknown, pinnedKeys: PinnedKeys): ManifestVerdict {
  if (!checkEnvelope.Check(envelope)) return refuse('malformed', describeProblem(envelope));
  const message = canonicalOrUndefined(envelope.manifest);
  if (message === undefined) return refuse('malformed', 'the manifest has no canonical JSON form');
  if (decodeRaw(envelope.signature, 64) === undefined || decodeRaw(envelope.public_key, 32) === undefined) return refuse('malformed', 'a key or signature is not canonical base64');
  const pinned = pinnedKeys(envelope.key_id);
  if (pinned === undefined) return refuse('unknown_key', `no publisher key is pinned for key id ${envelope.key_id}`);
  const key = publicKeyOf(pinned);
  if (key === undefined) throw new SigningKeyError(`the key pinned for ${envelope.key_id} is not an Ed25519 public key in base64`);
  if (pinned !== envelope.public_key) return refuse('key_mismatch', `the envelope's public key is not the one pinned for ${envelope.key_id}`);
  if (!verifyMessage(key, message, envelope.signature)) return refuse('signature_mismatch', 'the signature does not cover this manifest');
  return { ok: true, manifest: envelope.manifest, keyId: envelope.key_id, signedAt: envelope.signed_at };
}

/** verifySignedManifest over the text of manifest.signed.json; text that is not JSON is `malformed`. */
export function verifySignedManifestText(text: string, pinnedKeys: PinnedKeys): ManifestVerdict {
  let envelope: unknown;
  try {
    envelope = JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) return refuse('malformed', `${SIGNED_MANIFEST_FILE} is not JSON`);
    throw err;
  }
  return verifySignedManifest(envelope, pinnedKeys);
}

const refuse = (reason: ManifestRefusalReason, detail: string): ManifestVerdict => ({ ok: false, reason, detail });

function canonicalOrUndefined(manifest: Manifest): string | undefined {
  try {
    return manifestMessage(manifest);
  } catch (err) {
    // Parsed JSON can still hold a lone surrogate ("\ud800"), which has no canonical form.
    if (err instanceof CanonicalJsonError) return undefined;
    throw err;
  }
}

function describeProblem(envelope: unknown): string {
  const first = checkEnvelope.Errors(envelope).First();
  return first === undefined ? 'not a signed manifest envelope' : `${first.path || '/'}: ${first.message}`;
}
