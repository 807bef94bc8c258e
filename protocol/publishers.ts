// The publisher keys this brain trusts (spec 2.1, 5.1 rules 2 and 5; docs/signing.md "Trusting a
// publisher"): key_id → Ed25519 public key, kept in the vault namespace publisher_keys. Spec 5.1 rule 5
// announces an administrative API without defining it; this is svc's: GET/PUT/DELETE
// /api/publishers/keys[/:key_id], used by `svc publisher trust|untrust`.
import { Type, type Static } from '@sinclair/typebox';
import { B64_32_PATTERN, KEY_ID_PATTERN } from './signing';

export const PUBLISHER_KEYS_NAMESPACE = 'publisher_keys';

export const PublisherKey = Type.Object({ key_id: Type.String(), public_key: Type.String() }, { additionalProperties: false });
export type PublisherKey = Static<typeof PublisherKey>;
export const PublisherKeyList = Type.Object({ keys: Type.Array(PublisherKey) }, { additionalProperties: false });
export const PublisherKeyParams = Type.Object({ key_id: Type.String({ pattern: KEY_ID_PATTERN }) }, { additionalProperties: false });
export const TrustPublisherBody = Type.Object({ public_key: Type.String({ pattern: B64_32_PATTERN }) }, { additionalProperties: false });
export const TrustPublisherResult = Type.Object(
  {
    key_id: Type.String(),
    public_key: Type.String(),
    /** False when the same key was pinned already. */
    changed: Type.Boolean(),
  },
  { additionalProperties: false },
);
export const UntrustPublisherResult = Type.Object({ key_id: Type.String(), removed: Type.Literal(true) }, { additionalProperties: false });
