// Bearer-token authentication for every /api/* and /v1/* route (spec 5.2). Routes opt out with
// `config: { public: true }` (inbound webhook deliveries, pairing claims). An unknown /api path
// answers 401 before 404, so routes are not discoverable without a token.
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

const PROTECTED = /^\/(api|v1)(\/|$)/;

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

/** The request's authentication failure, or undefined when it may proceed (spec 5.2). */
export function authFailure(request: FastifyRequest, token: string): AppError | undefined {
  if (!PROTECTED.test(request.url) || request.routeOptions.config?.public === true) return undefined;
  const presented = presentedToken(request);
  if (tokenMatches(token, presented)) return undefined;
  return new AppError('UNAUTHORIZED', presented === undefined ? 'missing bearer token' : 'invalid bearer token', {
    hint: 'send Authorization: Bearer <token>; the token is in $SVC_HOME/api-token or SVC_API_TOKEN',
  });
}

/** Removes credentials from a URL before it is logged. */
export const redactUrl = (url: string): string => url.replace(/([?&]access_token=)[^&]*/g, '$1[REDACTED]');
