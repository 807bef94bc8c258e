// Which principals may use a route (docs/api.md "Authentication", docs/security.md), decided on the
// route that matched — never on the raw request target. Every route accepts only the admin (the API
// token) unless it declares otherwise: `config: { principals: ['anonymous'] }` makes it public
// (/health, /metrics), and a route for paired devices says `['admin', 'device']`. Who the request is
// comes from daemon/auth/authenticate.ts; the router decodes percent-escapes and strips an
// absolute-form `scheme://host` before it matches, so a check on `request.url` could be skipped by
// spelling a path differently (`/%61pi/…`, `http://h/api/…`).
//
// 401 UNAUTHORIZED: no credential, or one no verifier knows — "who are you?". 403 FORBIDDEN: a known
// principal of a kind this route does not accept. A public route reads no credential at all: it
// accepts anyone and identifies nobody, which also keeps /health as cheap as a route can be.
//
// A request that matched no route has no declaration to go by: under the API namespaces (/api,
// /v1, /mcp — compared after the same normalisation the router applies, and more) it needs some
// principal's credential, so the API's routes cannot be discovered anonymously; anywhere else it
// gets the ordinary 404, which is also what /metrics answers off loopback (spec 4.12: "identical to
// an unmounted endpoint").
import type { FastifyRequest } from 'fastify';
import { AppError } from '../kernel/errors';
import { authenticate, isAuthFailure, type CredentialVerifier } from '../auth/authenticate';
import { ANONYMOUS, AUTHENTICATED_KINDS, isPrincipalKind, type Principal, type PrincipalKind } from '../auth/principal';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The principals this route accepts; default ADMIN_ONLY. PUBLIC (['anonymous']) needs no credential. */
    principals?: readonly PrincipalKind[];
  }
  interface FastifyRequest {
    /** Who the request acts for, set by the first request hook before any handler runs. */
    principal: Principal;
  }
}

export const PUBLIC: readonly PrincipalKind[] = Object.freeze(['anonymous']);
export const ADMIN_ONLY: readonly PrincipalKind[] = Object.freeze(['admin']);

/** The principals a matched route accepts. */
export const routePrincipals = (config: { principals?: readonly PrincipalKind[] | undefined } | undefined): readonly PrincipalKind[] => config?.principals ?? ADMIN_ONLY;

/**
 * Refuses a route declaration that cannot mean what it says, when the route is registered: an
 * empty list (nobody), an unknown kind, or anonymous next to others (a public route identifies nobody,
 * so the others would never be seen).
 */
export function checkRouteDeclaration(url: string, principals: unknown): void {
  if (principals === undefined) return;
  const where = `route ${url}: config.principals`;
  if (!Array.isArray(principals) || principals.length === 0) throw new Error(`${where} must list at least one principal kind`);
  for (const kind of principals as unknown[]) if (!isPrincipalKind(kind)) throw new Error(`${where} names an unknown principal kind ${JSON.stringify(kind)}`);
  if (principals.includes('anonymous') && principals.length > 1) throw new Error(`${where}: 'anonymous' stands alone (a public route reads no credential)`);
}

const decodeOnce = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch (err) {
    if (err instanceof URIError) return s;
    throw err;
  }
};

/**
 * Whether a raw request target names a path in an API namespace (/api, /v1, /mcp), read as generously as
 * any router might: absolute form, query, fragment and `;` parameters cut off, percent-escapes
 * decoded (repeatedly), backslashes and repeated slashes folded, case and trailing dots ignored.
 * Used only for targets that matched no route, where it can turn a 404 into a 401, never the reverse.
 */
export function inApiNamespace(target: string): boolean {
  let path = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  for (let i = 0; i < 4; i++) {
    const decoded = decodeOnce(path);
    if (decoded === path) break;
    path = decoded;
  }
  const first = path.replace(/\\/g, '/').split(/[?#;]/, 1)[0]!.split('/').find((segment) => segment !== '') ?? '';
  const name = first.replace(/[.\s]+$/, '').toLowerCase();
  return name === 'api' || name === 'v1' || name === 'mcp';
}

export interface RouteGuard {
  /** Sets request.principal, or answers why the request may not proceed (spec 5.2). */
  authorize(request: FastifyRequest): AppError | undefined;
  /** The same decision for a request the router refused before matching (a malformed URL). */
  authorizeUnrouted(request: FastifyRequest): AppError | undefined;
}

export function routeGuard(verifiers: readonly CredentialVerifier[]): RouteGuard {
  const admit = (request: FastifyRequest, accepts: readonly PrincipalKind[]): AppError | undefined => {
    request.principal = ANONYMOUS;
    if (accepts.includes('anonymous')) return undefined;
    const result = authenticate(request, verifiers);
    if (isAuthFailure(result)) return unauthorized('invalid bearer token');
    if (result.kind === 'anonymous') return unauthorized('missing bearer token');
    if (!accepts.includes(result.kind)) {
      return new AppError('FORBIDDEN', `this route does not accept ${result.kind} credentials`, { principal: result.kind, accepts });
    }
    request.principal = result;
    return undefined;
  };
  return {
    authorize: (request) => {
      if (request.is404) return inApiNamespace(request.url) ? admit(request, AUTHENTICATED_KINDS) : admit(request, PUBLIC);
      return admit(request, routePrincipals(request.routeOptions.config));
    },
    authorizeUnrouted: (request) => admit(request, inApiNamespace(request.url) ? AUTHENTICATED_KINDS : PUBLIC),
  };
}

const unauthorized = (message: string): AppError =>
  new AppError('UNAUTHORIZED', message, { hint: 'send Authorization: Bearer <token>; the token is in $SVC_HOME/api-token or SVC_API_TOKEN' });
