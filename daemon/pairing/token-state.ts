// The pairing token's state machine (docs/pairing.md "Token states"):
//   unclaimed ──complete (PIN verified when one is required)──▶ claimed
//   unclaimed ──lifetime passes──▶ expired          (decided on read: nothing needs to run)
//   unclaimed ──revoke, prune, 5th wrong PIN──▶ revoked
// claimed, expired and revoked are final: a token never yields a second credential.
import type { TokenState } from '../../protocol/pairing';
import type { TokenRow } from './pairing-store';

export const stateOf = (row: Pick<TokenRow, 'state' | 'expires_at'>, nowSeconds: number): TokenState =>
  row.state === 'unclaimed' && nowSeconds >= row.expires_at ? 'expired' : row.state;

export const pinRequired = (row: Pick<TokenRow, 'pin_hash'>): boolean => row.pin_hash !== null;

/** Why a token cannot be claimed now, or null when it can. */
export type ClaimRefusal = { reason: 'not_unclaimed'; state: TokenState } | { reason: 'pin_unverified' };

export function claimRefusal(row: Pick<TokenRow, 'state' | 'expires_at' | 'pin_hash' | 'pin_verified'>, nowSeconds: number): ClaimRefusal | null {
  const state = stateOf(row, nowSeconds);
  if (state !== 'unclaimed') return { reason: 'not_unclaimed', state };
  if (pinRequired(row) && row.pin_verified !== 1) return { reason: 'pin_unverified' };
  return null;
}
