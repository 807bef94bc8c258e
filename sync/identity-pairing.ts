// Brain pairing (the sync CLI's `pair`, a pairing token of kind `brain`; docs/sync.md "The link"): the
// completing brain sends its id and public key with the token, the minting brain answers with its own,
// and each pins the other's key. Each side also signs what it sends, so a key is only ever pinned for
// the brain that holds its private half, and the answer is bound to this request (the token and both
// keys): a stale or spliced answer does not verify. After this, nothing secret crosses the wire again.
import { SYNC_PAIR_CONTEXT, type SyncPairRequest, type SyncPairResponse } from '../protocol/sync-link';
import { signText, verifyText, type SyncIdentity } from './identity-keys';

/** A peer brain as pairing pinned it. `revoked` once forgotten: its hello is then refused. */
export interface PinnedPeer {
  readonly brainId: string;
  /** Raw Ed25519 public key, base64url. */
  readonly publicKey: string;
  readonly revoked: boolean;
}

const requestText = (token: string, brainId: string, publicKey: string): string => [SYNC_PAIR_CONTEXT, 'request', token, brainId, publicKey].join('\n');
const responseText = (req: SyncPairRequest, brainId: string, publicKey: string): string =>
  [SYNC_PAIR_CONTEXT, 'response', req.token, req.brain_id, req.public_key, brainId, publicKey].join('\n');

/** What the completing brain sends with the token. */
export function pairRequest(identity: SyncIdentity, token: string, name?: string): SyncPairRequest {
  return {
    token,
    brain_id: identity.brainId,
    public_key: identity.publicKey,
    ...(name === undefined ? {} : { name }),
    proof: signText(identity, requestText(token, identity.brainId, identity.publicKey)),
  };
}

/** The peer a (schema-valid) request pins on the minting brain, or null when its proof does not verify. */
export function acceptPairRequest(req: SyncPairRequest, ownBrainId: string): PinnedPeer | null {
  if (req.brain_id === ownBrainId) return null;
  if (!verifyText(req.public_key, requestText(req.token, req.brain_id, req.public_key), req.proof)) return null;
  return { brainId: req.brain_id, publicKey: req.public_key, revoked: false };
}

/** The minting brain's answer to an accepted request; `deviceId` is the pairing's `dev_…` id. */
export function pairResponse(identity: SyncIdentity, req: SyncPairRequest, deviceId: string, name: string): SyncPairResponse {
  return { device_id: deviceId, brain_id: identity.brainId, public_key: identity.publicKey, name, proof: signText(identity, responseText(req, identity.brainId, identity.publicKey)) };
}

/**
 * The peer a (schema-valid) answer pins on the completing brain, or null when it is not the brain the
 * pair URL named (`expectedBrainId`) or its proof does not cover this request.
 */
export function acceptPairResponse(res: SyncPairResponse, req: SyncPairRequest, expectedBrainId: string): PinnedPeer | null {
  if (res.brain_id !== expectedBrainId || res.brain_id === req.brain_id) return null;
  if (!verifyText(res.public_key, responseText(req, res.brain_id, res.public_key), res.proof)) return null;
  return { brainId: res.brain_id, publicKey: res.public_key, revoked: false };
}
