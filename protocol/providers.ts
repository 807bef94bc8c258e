// Wire shapes of /api/providers (docs/providers.md "HTTP API"): provider chain state, labelled keys,
// model lists, tests and pins. No shape here ever carries a secret except AddKeyBody.secret, inbound.
import { Type, type Static } from '@sinclair/typebox';
import { Line } from './text';

export const PROVIDER_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,31}$';
export const KEY_LABEL_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const CooldownInfo = Type.Object({
  error_class: Type.String({ description: 'rate_limit, auth, billing, overloaded, timeout, network, unknown' }),
  until: Type.String({ description: 'ISO 8601 time the cooldown ends' }),
  active: Type.Boolean({ description: 'false once expired (the failure count is kept until a success)' }),
  strikes: Type.Integer({ description: 'Consecutive failures; each doubles the next cooldown' }),
  message: Type.String(),
});
export type CooldownInfo = Static<typeof CooldownInfo>;

export const KeyInfo = Type.Object({
  provider: Type.String(),
  label: Type.String(),
  fingerprint: Type.String({ description: 'First 12 hex digits of a salted SHA-256 of the key; none of its characters' }),
  state: Type.Union([Type.Literal('ok'), Type.Literal('cooling'), Type.Literal('disabled')], { description: 'disabled: refused for auth or billing; see svc key recover' }),
  cooldown: Type.Union([CooldownInfo, Type.Null()]),
  configured: Type.Boolean({ description: 'false when the provider is no longer in providers.chain' }),
});
export type KeyInfo = Static<typeof KeyInfo>;

export const ProviderInfo = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('openai'), Type.Literal('anthropic'), Type.Literal('local')]),
  position: Type.Integer({ description: '0 = tried first' }),
  base_url: Nullable(Type.String()),
  model: Type.String({ description: 'Model used when a request names none' }),
  pinned_model: Nullable(Type.String()),
  keyless: Type.Boolean(),
  state: Type.Union([Type.Literal('ok'), Type.Literal('cooling'), Type.Literal('unavailable')]),
  cooldown: Type.Union([CooldownInfo, Type.Null()]),
  keys: Type.Array(KeyInfo),
});
export type ProviderInfo = Static<typeof ProviderInfo>;

export const ProvidersResponse = Type.Object({ providers: Type.Array(ProviderInfo) });
export type ProvidersResponse = Static<typeof ProvidersResponse>;

export const KeysResponse = Type.Object({ keys: Type.Array(KeyInfo) });
export type KeysResponse = Static<typeof KeysResponse>;

export const ProviderParams = Type.Object({ provider: Type.String({ pattern: PROVIDER_ID_PATTERN }) });
export const KeyParams = Type.Object({ provider: Type.String({ pattern: PROVIDER_ID_PATTERN }), label: Type.String({ pattern: KEY_LABEL_PATTERN }) });

export const AddKeyBody = Type.Object(
  {
    label: Type.String({ pattern: KEY_LABEL_PATTERN }),
    secret: Line({ minLength: 1, maxLength: 4096, blank: false }),
    replace: Type.Optional(Type.Boolean({ description: 'Overwrite a key with the same label (default: 409)' })),
    probe: Type.Optional(Type.Boolean({ description: 'Default true: list models with the key before saving it' })),
  },
  { additionalProperties: false },
);
export type AddKeyBody = Static<typeof AddKeyBody>;

export const ProbeResult = Type.Object({
  ok: Type.Boolean(),
  latency_ms: Type.Number(),
  models: Type.Integer({ description: 'How many models the key can see (-1 when the probe was skipped)' }),
});
export const AddKeyResponse = Type.Object({ key: KeyInfo, probe: ProbeResult });
export type AddKeyResponse = Static<typeof AddKeyResponse>;

export const RemoveKeyResponse = Type.Object({ provider: Type.String(), label: Type.String(), removed: Type.Literal(true) });
export type RemoveKeyResponse = Static<typeof RemoveKeyResponse>;

export const ProviderFilterBody = Type.Object({ provider: Type.Optional(Type.String({ pattern: PROVIDER_ID_PATTERN })) }, { additionalProperties: false });
export type ProviderFilterBody = Static<typeof ProviderFilterBody>;

export const ResetCooldownsResponse = Type.Object({ cleared: Type.Integer() });
export type ResetCooldownsResponse = Static<typeof ResetCooldownsResponse>;

export const RecoverResponse = Type.Object({
  vault: Type.Union([Type.Literal('ok'), Type.Literal('locked')], { description: 'State after re-reading vault.json from disk' }),
  keys_in_vault: Type.Integer(),
  results: Type.Array(
    Type.Object({
      provider: Type.String(),
      label: Type.String(),
      result: Type.Union([Type.Literal('recovered'), Type.Literal('still_failing')]),
      error_class: Nullable(Type.String()),
      message: Nullable(Type.String()),
    }),
  ),
});
export type RecoverResponse = Static<typeof RecoverResponse>;

export const ModelsResponse = Type.Object({ provider: Type.String(), models: Type.Array(Type.String()), pinned: Nullable(Type.String()), effective: Type.String() });
export type ModelsResponse = Static<typeof ModelsResponse>;

export const ModelTestBody = Type.Object({ model: Type.Optional(Line({ minLength: 1, maxLength: 200, blank: false })) }, { additionalProperties: false });
export type ModelTestBody = Static<typeof ModelTestBody>;

export const ModelTestResponse = Type.Object({
  provider: Type.String(),
  key: Nullable(Type.String()),
  model: Type.String(),
  ok: Type.Boolean(),
  latency_ms: Type.Number({ description: 'Request to end of stream' }),
  first_token_ms: Type.Union([Type.Number(), Type.Null()]),
  text: Type.String(),
  error_class: Nullable(Type.String()),
  message: Nullable(Type.String()),
});
export type ModelTestResponse = Static<typeof ModelTestResponse>;

export const PinBody = Type.Object({ model: Line({ minLength: 1, maxLength: 200, blank: false }) }, { additionalProperties: false });
export type PinBody = Static<typeof PinBody>;

export const PinResponse = Type.Object({ provider: Type.String(), pinned: Nullable(Type.String()), effective: Type.String() });
export type PinResponse = Static<typeof PinResponse>;
