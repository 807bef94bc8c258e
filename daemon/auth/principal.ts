// Who a request acts for (docs/security.md "Principals and what each may do"). Every request that
// reaches a handler carries exactly one principal: the admin (the API token), a paired device, a
// node-agent, a peer brain, or anonymous on a public route. Routes declare which kinds they accept
// (daemon/http/auth.ts); limits and ownership key on principalId().

/**
 * A permission a paired device holds. The pairing flow names them when it mints a device credential;
 * the brain treats them as opaque until a route asks for one.
 */
export type Scope = string;

export type Principal =
  /** The holder of the API token: every route under /api and /v1. */
  | { readonly kind: 'admin' }
  /** A paired phone or browser, limited to its scopes. */
  | { readonly kind: 'device'; readonly id: string; readonly deviceKind: 'phone' | 'browser'; readonly scopes: readonly Scope[] }
  /** A node-agent (a board with hardware) by its node key. */
  | { readonly kind: 'node'; readonly id: string }
  /** Another brain this one federates with. */
  | { readonly kind: 'peer'; readonly id: string }
  /** Nobody in particular: only routes that accept anyone see this. */
  | { readonly kind: 'anonymous' };

export type PrincipalKind = Principal['kind'];

export const PRINCIPAL_KINDS: readonly PrincipalKind[] = Object.freeze(['admin', 'device', 'node', 'peer', 'anonymous']);

/** The kinds a credential can prove (all but anonymous). */
export const AUTHENTICATED_KINDS: readonly PrincipalKind[] = Object.freeze(PRINCIPAL_KINDS.filter((k) => k !== 'anonymous'));

// Shared, frozen: setting one on a request allocates nothing.
export const ADMIN: Principal = Object.freeze({ kind: 'admin' });
export const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous' });

export const isPrincipalKind = (value: unknown): value is PrincipalKind => typeof value === 'string' && (PRINCIPAL_KINDS as readonly string[]).includes(value);

/**
 * A stable string for a principal: `admin`, `anonymous`, or `<kind>:<id>`. The same device has the
 * same id whatever its scopes, so limits counted per principal survive a change of scopes. Distinct
 * principals never share an id: the kind comes first and contains no colon.
 */
export function principalId(p: Principal): string {
  switch (p.kind) {
    case 'admin':
    case 'anonymous':
      return p.kind;
    case 'device':
    case 'node':
    case 'peer':
      return `${p.kind}:${p.id}`;
  }
}
