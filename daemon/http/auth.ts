// Bearer-token authentication (spec 5.2), decided on the route that matched — never on the raw
// request target. Every route requires the API token unless it declares `config: { public: true }`
// (/health, /metrics; later inbound webhook deliveries and pairing claims). The router decodes
// percent-escapes and strips an absolute-form `scheme://host` before it matches, so a check on
// `request.url` could be skipped by spelling a path differently (`/%61pi/…`, `http://h/api/…`).
//
// A request that matched no route has no declaration to go by: under the API namespaces (/api,
// /v1 — compared after the same normalisation the router applies, and more) it needs the token, so
// the API's routes cannot be discovered anonymously; anywhere else it gets the ordinary 404, which
// is also what /metrics answers off loopback (spec 4.12: "identical to an unmounted endpoint").
//
// WebSocket clients that cannot set headers (browsers) present the token either as a subprotocol
// `svc.bearer.<token>` (offered next to `svc.v1`) or as the query parameter `access_token`
// (docs/api.md). Both are accepted only on upgrade requests; the query form is redacted from logs.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors';
import { tokenMatches } from '../auth/api-token';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** true: reachable without the API token. */
    public?: boolean;
  }
}

export const WS_PROTOCOL = 'svc.v1';
export const WS_BEARER_PREFIX = 'svc.bearer.';

export function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return m?.[1] ?? '';
  }
  if (request.headers.upgrade?.toLowerCase() !== 'websocket') return undefined;
  const protocols = request.headers['sec-websocket-protocol'];
  if (protocols) {
    const bearer = protocols.split(',').map((p) => p.trim()).find((p) => p.startsWith(WS_BEARER_PREFIX));
    if (bearer) return bearer.slice(WS_BEARER_PREFIX.length);
  }
  const query = request.query as Record<string, unknown> | undefined;
  return typeof query?.access_token === 'string' ? query.access_token : undefined;
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
 * Whether a raw request target names a path in an API namespace (/api, /v1), read as generously as
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
  return name === 'api' || name === 'v1';
}

/** The request's authentication failure, or undefined when it may proceed (spec 5.2). */
export function authFailure(request: FastifyRequest, token: string): AppError | undefined {
  if (request.is404 ? !inApiNamespace(request.url) : request.routeOptions.config?.public === true) return undefined;
  return tokenFailure(request, token);
}

/** The same decision for a request the router refused before matching (a malformed URL). */
export function unroutedAuthFailure(request: FastifyRequest, token: string): AppError | undefined {
  return inApiNamespace(request.url) ? tokenFailure(request, token) : undefined;
}

function tokenFailure(request: FastifyRequest, token: string): AppError | undefined {
  const presented = presentedToken(request);
  if (tokenMatches(token, presented)) return undefined;
  return new AppError('UNAUTHORIZED', presented === undefined ? 'missing bearer token' : 'invalid bearer token', {
    hint: 'send Authorization: Bearer <token>; the token is in $SVC_HOME/api-token or SVC_API_TOKEN',
  });
}

/** Removes credentials from a URL before it is logged. */
export const redactUrl = (url: string): string => url.replace(/([?&]access_token=)[^&]*/g, '$1[REDACTED]');
