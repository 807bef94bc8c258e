// WS /v1/session (spec 4.13): client sessions. Authentication is the app's onRequest hook (Bearer
// header, `svc.bearer.<token>` subprotocol next to `svc.v1`, or ?access_token=). The sockets live on
// app.websocketServer, so the brain's shutdown closes them with 1001 like every other socket.
import type { FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { SessionManager } from '../agent/session-manager';
import { parseFrame } from './frame-parser';
import { SessionConnection } from './session-connection';
import { WsClient, type WsClientOptions } from './ws-client';

export interface SessionRouteDeps {
  sessions: SessionManager;
  logger: Logger;
  options: WsClientOptions;
}

export const sessionRoutes =
  (deps: SessionRouteDeps): FastifyPluginAsync =>
  async (app) => {
    app.get('/v1/session', { websocket: true }, (socket) => {
      const client = new WsClient(socket, deps.options, (reason) => deps.logger.warn({ client: client.id, reason }, 'dropped a session client'));
      const connection = new SessionConnection(client, deps.sessions, deps.logger);
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
        client.stop();
        connection.closed();
      });
      socket.on('error', (err) => deps.logger.debug({ err, client: client.id }, 'session socket error'));
    });
  };
