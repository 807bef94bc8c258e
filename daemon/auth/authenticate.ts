// authenticate(request) → Principal | AuthFailure (docs/api.md "Authentication"): reads the one
// credential a request presents and asks each credential verifier in turn whose it is. Today the
// brain has one verifier, the API token (./api-token.ts); device, node and peer credentials plug in
// through the same port. Which principals a route accepts is decided elsewhere (daemon/http/auth.ts);
// this module knows nothing of routes or of fastify.
//
// Presentation (spec 5.2 leaves it open; docs/api.md): `Authorization: Bearer <token>` on any request;
// on WebSocket upgrades only, also the subprotocol `svc.bearer.<token>` (offered next to `svc.v1`) or
// the query parameter `access_token`, for browsers, which cannot set headers. First match wins.
import { ANONYMOUS, type Principal } from './principal';

export const WS_PROTOCOL = 'svc.v1';
export const WS_BEARER_PREFIX = 'svc.bearer.';

/** The parts of a request a credential can be read from (a FastifyRequest is one). */
export interface CredentialSource {
  readonly headers: { readonly authorization?: string | undefined; readonly upgrade?: string | undefined; readonly 'sec-websocket-protocol'?: string | undefined };
  readonly query?: unknown;
}

/** A credential as presented. Node keys and peer brains may add schemes of their own. */
export interface PresentedCredential {
  readonly scheme: 'bearer';
  /** Never empty: an empty or malformed credential fails before any verifier sees it. */
  readonly token: string;
}

/**
 * The port a credential store implements. `verify` answers the principal a credential belongs to,
 * or undefined when it is not one of this store's. It runs in the first request hook of every
 * authenticated request, so it is synchronous and cheap, and it must not leak by its timing which
 * credentials exist (compare in constant time, or look up by a hash of the credential).
 */
export interface CredentialVerifier {
  verify(credential: PresentedCredential): Principal | undefined;
}

/** A credential was presented and no verifier knows it (401). */
export interface AuthFailure {
  readonly failure: 'invalid_credential';
}

export const INVALID_CREDENTIAL: AuthFailure = Object.freeze({ failure: 'invalid_credential' });

export const isAuthFailure = (result: Principal | AuthFailure): result is AuthFailure => 'failure' in result;

/**
 * The principal a request acts for: anonymous when it presents no credential, the first verifier's
 * answer when one knows the credential, else INVALID_CREDENTIAL. A credential that is present but
 * malformed (`Authorization: Basic …`, an empty bearer) is invalid, never anonymous.
 */
export function authenticate(request: CredentialSource, verifiers: readonly CredentialVerifier[]): Principal | AuthFailure {
  const token = presentedToken(request);
  if (token === undefined) return ANONYMOUS;
  if (token === '') return INVALID_CREDENTIAL;
  const credential: PresentedCredential = { scheme: 'bearer', token };
  for (const verifier of verifiers) {
    const principal = verifier.verify(credential);
    if (principal !== undefined) return principal;
  }
  return INVALID_CREDENTIAL;
}

/** The bearer token a request presents: undefined when none, '' when the header is not a bearer. */
export function presentedToken(request: CredentialSource): string | undefined {
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
