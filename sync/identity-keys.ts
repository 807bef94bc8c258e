// A brain's sync identity: its brain id (mesh/brain-id.ts) bound to an Ed25519 keypair. Keys travel
// and are stored as raw 32-byte base64url (the JWK `x` and `d` of RFC 8037), signatures as raw 64-byte
// base64url. node:crypto does the work (ARCHITECTURE.md: no dependency, ten times @noble/ed25519).
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { B64URL_32_PATTERN, B64URL_64_PATTERN } from '../protocol/sync-link';

const RAW_32 = new RegExp(B64URL_32_PATTERN);
const RAW_64 = new RegExp(B64URL_64_PATTERN);

/** This brain, as the sync link knows it. `privateKey` never leaves the process but to its key file. */
export interface SyncIdentity {
  readonly brainId: string;
  /** Raw public key, base64url. */
  readonly publicKey: string;
  readonly privateKey: KeyObject;
}

/** A raw keypair as the key file keeps it. */
export interface RawKeypair {
  readonly publicKey: string;
  readonly privateKey: string;
}

export class SyncKeyError extends Error {}

/** A fresh Ed25519 keypair, raw base64url. */
export function generateKeypair(): RawKeypair {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  if (typeof jwk.x !== 'string' || typeof jwk.d !== 'string') throw new SyncKeyError('node:crypto exported an Ed25519 key without x or d');
  return { publicKey: jwk.x, privateKey: jwk.d };
}

/** The identity of `brainId` holding `pair`; the public key must be the private key's (a torn key file is an error). */
export function identityOf(brainId: string, pair: RawKeypair): SyncIdentity {
  if (!RAW_32.test(pair.publicKey) || !RAW_32.test(pair.privateKey)) throw new SyncKeyError('an Ed25519 key is 32 bytes in base64url (43 characters)');
  const privateKey = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pair.publicKey, d: pair.privateKey }, format: 'jwk' });
  const derived = createPublicKey(privateKey).export({ format: 'jwk' }).x;
  if (derived !== pair.publicKey) throw new SyncKeyError('the public key is not the private key\'s');
  return { brainId, publicKey: pair.publicKey, privateKey };
}

/** Whether `value` is a raw Ed25519 public key in base64url. */
export const isRawKey = (value: string): boolean => RAW_32.test(value);

/** The SHA-256 of the raw public key, base64url: what a hello names instead of the key itself. */
export function keyFingerprint(publicKey: string): string {
  return createHash('sha256').update(Buffer.from(publicKey, 'base64url')).digest('base64url');
}

/** A fresh 32-byte nonce from the CSPRNG, base64url. */
export const freshNonce = (): string => randomBytes(32).toString('base64url');

/** An Ed25519 signature over the UTF-8 of `message`, base64url. */
export function signText(identity: SyncIdentity, message: string): string {
  return sign(null, Buffer.from(message, 'utf8'), identity.privateKey).toString('base64url');
}

/**
 * Whether `signature` is `publicKey`'s over `message`. Malformed keys and signatures are simply not
 * valid: nothing a peer sends can make this throw.
 */
export function verifyText(publicKey: string, message: string, signature: string): boolean {
  if (!RAW_32.test(publicKey) || !RAW_64.test(signature)) return false;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
  } catch (err) {
    // A 32-byte string that is not a point on the curve: node:crypto refuses it on import.
    if (err instanceof Error && 'code' in err) return false;
    throw err;
  }
  return verify(null, Buffer.from(message, 'utf8'), key, Buffer.from(signature, 'base64url'));
}
