// Pairing PINs (docs/pairing.md "PIN"): 4–8 digits, kept as HMAC-SHA256 under a per-token random salt
// and compared in constant time. A PIN the brain chooses is 6 digits from the CSPRNG.
import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

export const PIN_RE = /^[0-9]{4,8}$/;
/** Wrong PINs a token survives; the next wrong one revokes it. */
export const MAX_PIN_FAILURES = 5;

export const newPin = (): string => randomInt(0, 1_000_000).toString().padStart(6, '0');

export function hashPin(pin: string, salt: string = randomBytes(16).toString('hex')): { salt: string; hash: string } {
  return { salt, hash: createHmac('sha256', salt).update(pin, 'utf8').digest('hex') };
}

/** Whether `pin` is the one hashed as `hash` under `salt`; constant time in the PIN's content. */
export function pinMatches(pin: string, salt: string, hash: string): boolean {
  const given = Buffer.from(hashPin(pin, salt).hash, 'hex');
  const stored = Buffer.from(hash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}
