// The 6-digit pairing code of node-protocol.md ("Pairing a node"): a node without a screen shows
// "NNN NNN" (CSPRNG, leading zeros kept) and the person types it into the brain. Parsing accepts the
// code with one space or dash in the middle, or none, so what is read off a display can be typed as seen.
import { randomInt } from 'node:crypto';

/** A code as stored and compared: exactly six ASCII digits. */
export type PairCode = string & { readonly __pairCode: unique symbol };

const CODE = /^(\d{3})[ -]?(\d{3})$/;

/** A new code from the CSPRNG, uniform over 000000–999999. */
export function newPairCode(): PairCode {
  return randomInt(0, 1_000_000).toString().padStart(6, '0') as PairCode;
}

/** The canonical six digits of a typed code, or undefined when it is not one. */
export function parsePairCode(input: string): PairCode | undefined {
  const m = CODE.exec(input.trim());
  return m ? (`${m[1]!}${m[2]!}` as PairCode) : undefined;
}

/** How a node shows its code: "NNN NNN". */
export const displayPairCode = (code: PairCode): string => `${code.slice(0, 3)} ${code.slice(3)}`;
