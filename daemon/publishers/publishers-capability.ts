// The publishers capability (spec 5.1 rules 2 and 5; docs/signing.md "Trusting a publisher"): the
// publisher keys this brain trusts, key_id → Ed25519 public key in the vault namespace publisher_keys,
// and their administrative API (admin only). Pinning a different key under a key id that already has
// one is refused: untrust it first, so a key is never swapped silently under the skills it admitted.
// Skills signed by a key that is untrusted turn to status error at the next start.
import { PUBLISHER_KEYS_NAMESPACE, PublisherKeyList, PublisherKeyParams, TrustPublisherBody, TrustPublisherResult, UntrustPublisherResult } from '../../protocol/publishers';
import { ErrorEnvelope } from '../../protocol/errors';
import { publicKeyOf } from '../../signing/ed25519';
import { defineCapability, type SecretStore } from '../kernel/capability';
import { AppError } from '../kernel/errors';
import { routes } from '../http/route-kit';

const errors = { 400: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope };

/** Pins `publicKey` under `keyId`; false when that exact key was pinned already. */
export function trustPublisher(vault: SecretStore, keyId: string, publicKey: string): boolean {
  if (publicKeyOf(publicKey) === undefined) throw new AppError('BAD_REQUEST', 'public_key is not an Ed25519 public key (32 bytes, base64); small-order keys are refused', { key_id: keyId });
  const pinned = vault.get(PUBLISHER_KEYS_NAMESPACE, keyId);
  if (pinned === publicKey) return false;
  if (pinned !== undefined) throw new AppError('CONFLICT', `key id ${keyId} is pinned to another public key; untrust it first (svc publisher untrust ${keyId})`, { key_id: keyId });
  vault.set(PUBLISHER_KEYS_NAMESPACE, keyId, publicKey);
  return true;
}

export const publishersCapability = defineCapability({
  name: 'publishers',
  create: (context) => {
    const vault = context.vault;
    return {
      routes: [
        routes(async (app) => {
          app.get('/api/publishers/keys', { schema: { response: { 200: PublisherKeyList } } }, () => ({
            keys: vault
              .keys(PUBLISHER_KEYS_NAMESPACE)
              .sort()
              .map((key_id) => ({ key_id, public_key: vault.get(PUBLISHER_KEYS_NAMESPACE, key_id) ?? '' })),
          }));
          app.put('/api/publishers/keys/:key_id', { schema: { params: PublisherKeyParams, body: TrustPublisherBody, response: { 200: TrustPublisherResult, ...errors } } }, (req) => {
            const changed = trustPublisher(vault, req.params.key_id, req.body.public_key);
            if (changed) context.logger.info({ key_id: req.params.key_id }, 'publisher key trusted');
            return { key_id: req.params.key_id, public_key: req.body.public_key, changed };
          });
          app.delete('/api/publishers/keys/:key_id', { schema: { params: PublisherKeyParams, response: { 200: UntrustPublisherResult, ...errors } } }, (req) => {
            if (!vault.delete(PUBLISHER_KEYS_NAMESPACE, req.params.key_id)) throw new AppError('NOT_FOUND', `no publisher key is pinned for key id ${req.params.key_id}`, { key_id: req.params.key_id });
            context.logger.info({ key_id: req.params.key_id }, 'publisher key untrusted');
            return { key_id: req.params.key_id, removed: true as const };
          });
        }),
      ],
    };
  },
});
