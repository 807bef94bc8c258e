// Errors on an established WebSocket, for @fastify/websocket's errorHandler. `ws` reports a peer
// that breaks the protocol — a frame past maxPayload (it has already sent close 1009), invalid UTF-8
// in a text frame (1007), a bad opcode, mask or close code (1002) — as an 'error' on the socket
// after it sent the close frame (RFC 6455 7.4.1). That is the client's mistake, not the brain's: one
// warn line without a stack, and the close handshake is left to finish so the peer learns the code.
// Anything else is a fault of ours: logged at error with its stack, and the socket is terminated,
// as the plugin's default handler does.
import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';

/** ws marks its protocol errors with a code `WS_ERR_*` and the close code it sent. */
export function isProtocolError(err: Error): err is Error & { code: string } {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('WS_ERR_');
}

const closeCodeOf = (err: Error): number | null => {
  for (const symbol of Object.getOwnPropertySymbols(err)) {
    const value = (err as unknown as Record<symbol, unknown>)[symbol];
    if (symbol.description === 'status-code' && typeof value === 'number') return value;
  }
  return null;
};

export function socketErrorHandler(err: Error, socket: Pick<WebSocket, 'terminate'>, request: Pick<FastifyRequest, 'log' | 'url'>): void {
  if (isProtocolError(err)) {
    request.log.warn({ code: err.code, close_code: closeCodeOf(err), reason: err.message, path: request.url.split('?')[0] }, 'WebSocket client broke the protocol; closed its connection');
    return;
  }
  request.log.error({ err }, 'WebSocket failed');
  socket.terminate();
}
