// Pairing tokens and device credentials (docs/pairing.md "Tokens"): 32 bytes from the CSPRNG, base64url,
// behind a prefix that says what the string is — so a token pasted in the wrong place is recognised
// (and refused) before any lookup, and a secret scanner can find leaked ones. The brain stores only
// sha256 of either; the string itself is shown once.
import { createHash, randomBytes } from 'node:crypto';

/** A pairing token: single use, claimed once for a device credential. */
export const PAIR_TOKEN_PREFIX = 'svcpt_';
/** A device credential (phone, browser, node key, peer brain key). */
export const DEVICE_KEY_PREFIX = 'svcdk_';

const BODY = '[A-Za-z0-9_-]{43}';
const PAIR_TOKEN = new RegExp(`^${PAIR_TOKEN_PREFIX}${BODY}$`);
const DEVICE_KEY = new RegExp(`^${DEVICE_KEY_PREFIX}${BODY}$`);

/** Longest string either parser reads; an input schema may cap its field at this. */
export const SECRET_MAX_LENGTH = 64;

const secret = (prefix: string): string => `${prefix}${randomBytes(32).toString('base64url')}`;

export const newPairToken = (): string => secret(PAIR_TOKEN_PREFIX);
export const newDeviceKey = (): string => secret(DEVICE_KEY_PREFIX);

export const isPairToken = (s: string): boolean => PAIR_TOKEN.test(s);
export const isDeviceKey = (s: string): boolean => DEVICE_KEY.test(s);

/** What the brain keeps of a token or key: its sha256, hex. */
export const secretHash = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
