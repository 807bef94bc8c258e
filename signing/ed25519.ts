// Ed25519 for publisher signatures, through node:crypto (as sync/identity-keys.ts: no dependency). Keys
// and signatures are raw bytes in padded standard base64 (protocol/signing.ts), and only the canonical
// spelling decodes: base64 leaves spare bits in the last character, and a signature that verified under
// several spellings would let a changed envelope byte go unnoticed.
//
// Every message a publisher key signs names what it is for (docs/signing.md, "What is signed"): a
// manifest signature covers the canonical JSON of the manifest alone, as spec 2.1 says, and every other
// use puts a context line first (`svc-artifact-v1\n`, …). Canonical JSON of a manifest starts with `{`
// and a context line with a letter, so no signature made for one use verifies for another.
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { B64_32_PATTERN, B64_64_PATTERN } from '../protocol/signing';

export class SigningKeyError extends Error {}

/** A publisher key able to sign: its id and private key (the public key is derived from it). */
export interface SigningKey {
  readonly keyId: string;
  readonly privateKey: KeyObject;
}

const RAW_32 = new RegExp(B64_32_PATTERN);
const RAW_64 = new RegExp(B64_64_PATTERN);

/** The bytes of `text` when it is the canonical base64 of `size` (32 or 64) bytes, else undefined. */
export function decodeRaw(text: string, size: 32 | 64): Buffer | undefined {
  if (!(size === 32 ? RAW_32 : RAW_64).test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === size && bytes.toString('base64') === text ? bytes : undefined;
}

/**
 * The encodings of the eight points of small order, canonical and not (y ≥ p, or x's sign bit on x = 0),
 * all of which node:crypto (OpenSSL) imports. Under such a key a forged signature (R the identity, S
 * zero) verifies for one message in eight or more, with no private key: a host must never pin one.
 */
const SMALL_ORDER = new Set([
  '0100000000000000000000000000000000000000000000000000000000000000',
  '0100000000000000000000000000000000000000000000000000000000000080',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
  'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
]);

/**
 * The public key of a raw base64 Ed25519 public key, or undefined when it is not 32 canonical bytes or
 * is a point of small order. node:crypto imports any other 32 bytes; an encoding that is no curve point
 * then verifies nothing.
 */
export function publicKeyOf(publicKey: string): KeyObject | undefined {
  const raw = decodeRaw(publicKey, 32);
  if (raw === undefined || SMALL_ORDER.has(raw.toString('hex'))) return undefined;
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

/** The private key of raw base64 `privateKey`, which must belong to `publicKey`. */
export function privateKeyOf(publicKey: string, privateKey: string): KeyObject {
  const x = decodeRaw(publicKey, 32);
  const d = decodeRaw(privateKey, 32);
  if (x === undefined || d === undefined) throw new SigningKeyError('an Ed25519 key is 32 bytes in base64 (44 characters)');
  const key = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x: x.toString('base64url'), d: d.toString('base64url') }, format: 'jwk' });
  if (rawPublicKey(key) !== publicKey) throw new SigningKeyError('the public key is not the private key\'s');
  return key;
}

/** The raw base64 public key of an Ed25519 private or public key. */
export function rawPublicKey(key: KeyObject): string {
  const x = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'jwk' }).x;
  if (typeof x !== 'string') throw new SigningKeyError('not an Ed25519 key');
  return Buffer.from(x, 'base64url').toString('base64');
}

/** The raw base64 private key of an Ed25519 private key (for its key file only). */
export function rawPrivateKey(key: KeyObject): string {
  const d = key.export({ format: 'jwk' }).d;
  if (typeof d !== 'string') throw new SigningKeyError('not an Ed25519 private key');
  return Buffer.from(d, 'base64url').toString('base64');
}

/**
 * The key id derived from a public key: the first 24 hex digits (96 bits) of the SHA-256 of its raw
 * bytes. Long enough that no two keys share one; hex, so it never starts with '-' (a command line would
 * take it for a flag) and survives any case-folding.
 */
export function keyIdOf(publicKey: string): string {
  const raw = decodeRaw(publicKey, 32);
  if (raw === undefined) throw new SigningKeyError('an Ed25519 key is 32 bytes in base64 (44 characters)');
  return createHash('sha256').update(raw).digest('hex').slice(0, 24);
}

/** An Ed25519 signature over the UTF-8 of `message`, base64. */
export const signMessage = (key: KeyObject, message: string): string => sign(null, Buffer.from(message, 'utf8'), key).toString('base64');

/** Whether `signature` (base64) is `key`'s over the UTF-8 of `message`; a malformed signature is simply not valid. */
export function verifyMessage(key: KeyObject, message: string, signature: string): boolean {
  const raw = decodeRaw(signature, 64);
  return raw !== undefined && verify(null, Buffer.from(message, 'utf8'), key, raw);
}
