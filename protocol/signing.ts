// Signed manifests and publisher keys (spec 2.1 "Signed manifest envelope", 4.14 `svc app sign`, 5.1
// "Manifest trust"; docs/signing.md). The envelope of manifest.signed.json, the detached signature of a
// registry download, and the publisher key file. Keys and signatures are raw Ed25519 bytes in standard
// base64 with padding (RFC 4648 section 4), as the spec writes them: a public key is 44 characters, a
// signature 88. signing/ also refuses a non-canonical encoding (spare bits set), so one signature has
// exactly one spelling.
import { Type, type Static } from '@sinclair/typebox';

/** A raw 32-byte key in padded standard base64. */
export const B64_32_PATTERN = '^[A-Za-z0-9+/]{43}=$';
/** A raw 64-byte signature in padded standard base64. */
export const B64_64_PATTERN = '^[A-Za-z0-9+/]{86}==$';
/** A key id: what the host pins in the vault namespace publisher_keys (spec 5.1), and what `--key-id` names; never a leading '-' (a flag). */
export const KEY_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$';
/** A SHA-256 digest in lower-case hex. */
export const SHA256_HEX_PATTERN = '^[0-9a-f]{64}$';

/** The one signature algorithm. */
export const SIGNING_ALG = 'ed25519';

/** manifest.signed.json, next to manifest.json (spec 2.1). Only `manifest` is covered by the signature. */
export const SignedManifestEnvelope = Type.Object(
  {
    /** The app (or skill) manifest that was signed. */
    manifest: Type.Record(Type.String(), Type.Unknown()),
    /** Ed25519 over the RFC 8785 canonical JSON of `manifest` (docs/signing.md, "What is signed"). */
    signature: Type.String({ pattern: B64_64_PATTERN }),
    /** The publisher's public key; the verifier uses the pinned key and refuses a different one here (`key_mismatch`). */
    public_key: Type.String({ pattern: B64_32_PATTERN }),
    key_id: Type.String({ pattern: KEY_ID_PATTERN }),
    /** When it was signed, ISO 8601 UTC. Informational: not covered by the signature. */
    signed_at: Type.String({ minLength: 1, maxLength: 64 }),
    alg: Type.Literal(SIGNING_ALG),
  },
  { additionalProperties: false },
);
export type SignedManifestEnvelope = Static<typeof SignedManifestEnvelope>;

/** Why a signed manifest is refused: spec 7 names signature_mismatch and key_mismatch. */
export const MANIFEST_REFUSAL_REASONS = ['malformed', 'unknown_key', 'key_mismatch', 'signature_mismatch'] as const;
export type ManifestRefusalReason = (typeof MANIFEST_REFUSAL_REASONS)[number];

/** The detached signature that travels with a registry download (a tarball). */
export const DetachedSignature = Type.Object(
  {
    alg: Type.Literal(SIGNING_ALG),
    /** SHA-256 of the artifact's bytes. */
    sha256: Type.String({ pattern: SHA256_HEX_PATTERN }),
    key_id: Type.String({ pattern: KEY_ID_PATTERN }),
    /** Ed25519 over `svc-artifact-v1\n` + the hex digest (docs/signing.md, "Detached signatures"). */
    sig: Type.String({ pattern: B64_64_PATTERN }),
  },
  { additionalProperties: false },
);
export type DetachedSignature = Static<typeof DetachedSignature>;

/** Why a download is refused. */
export const ARTIFACT_REFUSAL_REASONS = ['malformed', 'unknown_key', 'digest_mismatch', 'signature_mismatch'] as const;
export type ArtifactRefusalReason = (typeof ARTIFACT_REFUSAL_REASONS)[number];

/** `<dir>/publisher.key` (0600): the publisher identity, made once. */
export const PublisherKeyFile = Type.Object(
  {
    v: Type.Literal(1),
    key_id: Type.String({ pattern: KEY_ID_PATTERN }),
    public_key: Type.String({ pattern: B64_32_PATTERN }),
    private_key: Type.String({ pattern: B64_32_PATTERN }),
  },
  { additionalProperties: false },
);
export type PublisherKeyFile = Static<typeof PublisherKeyFile>;
