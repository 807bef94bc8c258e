// The error envelope of spec section 7, and the catalogue of stable codes every client can rely on.
import { Type, type Static } from '@sinclair/typebox';

/** Stable error codes and the HTTP status each maps to. Codes are part of the public contract. */
export const ERROR_CODES = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  /** The request (headers or body) did not arrive within server.request_timeout_ms / headers_timeout_ms. */
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  /** A plain HTTP request to a WebSocket endpoint (/v1/session). */
  UPGRADE_REQUIRED: 426,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE: 422,
  /** svc key add: the provider refused the key, so it was not saved. */
  KEY_PROBE_FAILED: 422,
  RATE_LIMITED: 429,
  /** The request line and headers exceed node's limit (16 KiB). */
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
  /** An upstream LLM provider failed a models list/test call. */
  PROVIDER_FAILED: 502,
  UNAVAILABLE: 503,
  /** The vault cannot be decrypted (wrong key or corrupt file); secrets are unavailable. */
  VAULT_LOCKED: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable machine-readable code, e.g. NOT_FOUND' }),
      message: Type.String({ description: 'Human-readable explanation' }),
      details: Type.Union([Type.Unknown(), Type.Null()], { description: 'Structured context or null' }),
    }),
  },
  { $id: 'ErrorEnvelope' },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

/** One schema-validation problem, as carried in details.fields of a 400. */
export const FieldError = Type.Object({ path: Type.String(), message: Type.String() });
export type FieldError = Static<typeof FieldError>;

/** Spec 7: the `error` of a 422 manifest verification failure. */
export const UNVERIFIED_MANIFEST = 'UnverifiedManifest';

/** Spec 7, 4.1: the body of a manifest verification failure (not the standard envelope). */
export const UnverifiedManifestBody = Type.Object(
  { error: Type.Literal(UNVERIFIED_MANIFEST), reason: Type.String(), message: Type.String() },
  { additionalProperties: false },
);
