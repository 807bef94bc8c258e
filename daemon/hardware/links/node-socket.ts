// GET /v1/node, the WebSocket of hardware nodes (node-protocol.md "Transport"). The route is public
// at the HTTP level, so that a refused node key gets the protocol's answer (error 1001, close 4001)
// instead of an HTTP 401 most node SDKs cannot read; the key is read here and judged by the hub.
//
// The key, first hit wins: `Authorization: Bearer <key>`, then a `Sec-WebSocket-Protocol` entry
// `feral-token-<key>`, then `?api_key=<key>` (deprecated). The key is never logged: the brain's
// fastify logs no request lines, and its socket error lines carry the path without the query.
import type { IncomingHttpHeaders } from 'node:http';
import type { WebSocket } from 'ws';
import { HUP_TOKEN_PROTOCOL_PREFIX } from '../../../protocol/node';
import type { RoutePlugin } from '../../kernel/capability';
import { routes } from '../../http/route-kit';

export type KeyForm = 'header' | 'subprotocol' | 'query';

/** The node key an upgrade request carried, and how. */
export interface PresentedKey {
  readonly key: string;
  readonly via: KeyForm;
}

/** What the route hands each accepted upgrade to. */
export type AcceptNodeSocket = (socket: WebSocket, key: PresentedKey | null, remote: string) => void;

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The key of an upgrade request, first hit wins (header, subprotocol entry, query); null when none. */
export function presentedKey(headers: IncomingHttpHeaders, query: unknown): PresentedKey | null {
  const bearer = BEARER.exec(headers.authorization ?? '')?.[1];
  if (bearer) return { key: bearer, via: 'header' };
  const offered = headers['sec-websocket-protocol'];
  for (const entry of (offered ?? '').split(',')) {
    const protocol = entry.trim();
    if (protocol.startsWith(HUP_TOKEN_PROTOCOL_PREFIX) && protocol.length > HUP_TOKEN_PROTOCOL_PREFIX.length) {
      return { key: protocol.slice(HUP_TOKEN_PROTOCOL_PREFIX.length), via: 'subprotocol' };
    }
  }
  const apiKey = query !== null && typeof query === 'object' ? (query as Record<string, unknown>).api_key : undefined;
  if (typeof apiKey === 'string' && apiKey !== '') return { key: apiKey, via: 'query' };
  return null;
}

/** The /v1/node route; every upgrade goes to `accept` with the key it presented. */
export const nodeSocketRoute = (accept: AcceptNodeSocket): RoutePlugin =>
  routes(async (app) => {
    app.get('/v1/node', { websocket: true, config: { principals: ['anonymous'] } }, (socket, request) => {
      accept(socket, presentedKey(request.headers, request.query), request.ip);
    });
  });
