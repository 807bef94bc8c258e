// WS /v1/session (spec 4.13): client sessions. Authentication is the app's onRequest hook (Bearer
// header, `svc.bearer.<token>` subprotocol next to `svc.v1`, or ?access_token=); the principal it
// found owns the connection's sessions and counts against their limits. The sockets live on
// app.websocketServer, so the brain's shutdown closes them with 1001 like every other socket.
// Protocol errors of the socket itself (oversize frame, bad UTF-8) go to ./socket-errors.ts.
import type { FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { SessionManager } from '../agent/session-manager';
import { parseFrame } from './frame-parser';
import { principalId, type PrincipalKind } from '../auth/principal';
import { SessionConnection } from './session-connection';
import { WsClient, type WsClientOptions } from './ws-client';
import type { ConnectionRegistry } from './connection-registry';

export interface SessionRouteDeps {
  sessions: SessionManager;
  logger: Logger;
  options: WsClientOptions;
  /** The principals that may open sessions (default: the admin only). */
  principals?: readonly PrincipalKind[];
  /** Where open sockets are listed by principal (revoke closes a device's, handoff moves a session). */
  registry?: ConnectionRegistry;
}

export const sessionRoutes =
  (deps: SessionRouteDeps): FastifyPluginAsync =>
  async (app) => {
    app.get('/v1/session', { websocket: true, config: { principals: deps.principals ?? ['admin'] } }, (socket, request) => {
      const client = new WsClient(socket, deps.options, (reason) => deps.logger.warn({ client: client.id, reason }, 'dropped a session client'));
      const connection = new SessionConnection(client, deps.sessions, deps.logger, principalId(request.principal));
      const unregister = deps.registry?.add({
        principal: principalId(request.principal),
        id: client.id,
        sessionId: () => connection.sessionId(),
        join: (id) => connection.join(id),
        handOff: (id) => connection.handOff(id),
        // Revoked: detached at once (no further frames reach it), closed, and cut off if it does not answer the close.
        send: (frame) => client.send(frame),
        close: (code, reason) => {
          connection.closed();
          socket.close(code, reason);
          setTimeout(() => socket.terminate(), 1000).unref();
        },
      });
      client.start();
      socket.on('pong', () => client.seen());
      socket.on('message', (data, isBinary) => {
        client.seen();
        const parsed = parseFrame(data, isBinary);
        if (!parsed.ok) return connection.error(parsed.code, parsed.message, parsed.sessionId, parsed.details);
        try {
          connection.handle(parsed.message);
        } catch (err) {
          // A bug in handling one frame must not close the brain or the connection (issue 4).
          deps.logger.error({ err, type: parsed.message.type }, 'session frame handler failed');
          connection.error('INTERNAL', 'the brain could not handle this frame; see its log', parsed.message.session_id);
        }
      });
      socket.on('close', () => {
        unregister?.();
        client.stop();
        connection.closed();
      });
    });
  };
