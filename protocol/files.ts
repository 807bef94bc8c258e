// /api/grants (issue 11): the folders the agent's file tools may touch. A grant is a directory (its
// realpath at grant time), a mode (read, or write which includes read) and an optional expiry.
// The shapes are svc's own (the spec does not show them): docs/files.md.
import { Type, type Static } from '@sinclair/typebox';
import { Line } from './text';

export const GrantMode = Type.Union([Type.Literal('read'), Type.Literal('write')]);
export type GrantMode = Static<typeof GrantMode>;

export const Grant = Type.Object({
  path: Type.String({ description: 'Absolute realpath of the granted directory' }),
  mode: GrantMode,
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});
export type Grant = Static<typeof Grant>;

export const GrantList = Type.Object({ grants: Type.Array(Grant) });
export type GrantList = Static<typeof GrantList>;

const GrantPath = Line({ minLength: 1, maxLength: 4096, description: 'Absolute path of an existing directory' });

export const GrantRequest = Type.Object(
  {
    path: GrantPath,
    write: Type.Optional(Type.Boolean({ description: 'Allow writes (default: read only)' })),
    for: Type.Optional(Line({ minLength: 2, maxLength: 32, description: 'How long the grant lasts, e.g. 90m, 2h, 1d12h (default: until revoked)' })),
  },
  { additionalProperties: false },
);
export type GrantRequest = Static<typeof GrantRequest>;

export const GrantRevoke = Type.Object({ path: GrantPath }, { additionalProperties: false });
export type GrantRevoke = Static<typeof GrantRevoke>;

export const GrantRevokeQuery = Type.Object({ path: Type.Optional(GrantPath) }, { additionalProperties: false });

export const GrantRevoked = Type.Object({ revoked: Grant });
export type GrantRevoked = Static<typeof GrantRevoked>;
