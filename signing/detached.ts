// Detached signatures for registry downloads (issue 16, "Marketplace registry": a tarball with its sha256
// and a detached Ed25519 signature; docs/signing.md). The publisher key signs the context line
// `svc-artifact-v1` and the hex SHA-256 of the artifact's bytes, so the signature travels apart from a
// possibly large tarball, and no signature made for a manifest or anything else verifies here.
import { createHash } from 'node:crypto';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DetachedSignature, SIGNING_ALG, type ArtifactRefusalReason } from '../protocol/signing';
import { decodeRaw, publicKeyOf, signMessage, SigningKeyError, verifyMessage, type SigningKey } from './ed25519';
import type { PinnedKeys } from './signed-manifest';

/** The context line a detached signature covers before the digest. */
export const ARTIFACT_CONTEXT = 'svc-artifact-v1';

export type ArtifactVerdict =
  | { readonly ok: true; readonly keyId: string; readonly sha256: string }
  | { readonly ok: false; readonly reason: ArtifactRefusalReason; readonly detail: string };

const checkDetached = TypeCompiler.Compile(DetachedSignature);

/** The hex SHA-256 of `bytes`. */
export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** What a detached signature covers: the context line, then the hex digest. */
export const artifactMessage = (sha256: string): string => `${ARTIFACT_CONTEXT}\n${sha256}`;

/** The detached signature of `bytes` by `key`. */
export function signArtifact(bytes: Uint8Array, key: SigningKey): DetachedSignature {
  const sha256 = sha256Hex(bytes);
  return { alg: SIGNING_ALG, sha256, key_id: key.keyId, sig: signMessage(key.privateKey, artifactMessage(sha256)) };
}

/**
 * Whether `detached` (parsed JSON, untrusted) is the signature of `bytes` by the key pinned for its
 * key_id. The digest is recomputed from the bytes, never taken from the signature.
 */
export function verifyArtifact(bytes: Uint8Array, detached: unknown, pinnedKeys: PinnedKeys): ArtifactVerdict {
  if (!checkDetached.Check(detached) || decodeRaw(detached.sig, 64) === undefined) return refuse('malformed', 'not a detached ed25519 signature');
  const pinned = pinnedKeys(detached.key_id);
  if (pinned === undefined) return refuse('unknown_key', `no publisher key is pinned for key id ${detached.key_id}`);
  const key = publicKeyOf(pinned);
  if (key === undefined) throw new SigningKeyError(`the key pinned for ${detached.key_id} is not an Ed25519 public key in base64`);
  const sha256 = sha256Hex(bytes);
  if (sha256 !== detached.sha256) return refuse('digest_mismatch', 'the bytes are not the ones that were signed');
  if (!verifyMessage(key, artifactMessage(sha256), detached.sig)) return refuse('signature_mismatch', 'the signature does not cover these bytes');
  return { ok: true, keyId: detached.key_id, sha256 };
}

const refuse = (reason: ArtifactRefusalReason, detail: string): ArtifactVerdict => ({ ok: false, reason, detail });
