// buildApp(deps): the brain's HTTP/WebSocket surface without listen() (STYLE.md 7). Tests call it with
// plain fakes and use app.inject(); daemon/main.ts hands it the real parts.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest } from 'fastify';
import websocket from '@fastify/websocket';
import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import type { Metrics } from './metrics/metrics';
import type { Lifecycle } from './lifecycle/lifecycle';
import { installErrorHandlers, envelope, frameworkErrors, clientErrorHandler } from './http/error-handler';
import { ClientErrorLog } from './http/client-error-log';
import { checkRouteDeclaration, routeGuard, routePrincipals } from './http/auth';
import { WS_PROTOCOL, type CredentialVerifier } from './auth/authenticate';
import { HUP_SUBPROTOCOL, HUP_TOKEN_PROTOCOL_PREFIX } from '../protocol/node';
import { apiTokenVerifier } from './auth/api-token';
import { installMetrics } from './http/metrics-routes';
import { healthRoutes } from './http/health-routes';
import { lazySchemaCompilers } from './http/lazy-schemas';
import { installBodyParsers, routerOptions } from './http/request-parsing';
import { socketErrorHandler } from './ws/socket-errors';

export interface AppDeps {
  logger: Logger;
  version: string;
  apiToken: string;
  /** Credential stores beyond the API token (paired devices, node keys, peer brains), asked after it. */
  verifiers?: readonly CredentialVerifier[];
  metrics: Metrics;
  metricsPublic: boolean;
  lifecycle: Lifecycle;
  bodyLimit: number;
  /** Slow clients (docs/security.md): a request's headers, and the whole request, must arrive within these. */
  timeouts?: { requestMs: number; headersMs: number };
  /** Resource plugins (one per resource group), registered after the core hooks. */
  routes?: readonly FastifyPluginAsync[];
  /** WebSocket route plugins (`{ websocket: true }` routes), registered together with @fastify/websocket. */
  sockets?: readonly FastifyPluginAsync[];
}

const DEFAULT_TIMEOUTS = { requestMs: 30_000, headersMs: 10_000 };

/** Request ids unique per process and distinguishable across restarts: `<boot>-<counter>`, cheaper than a UUID per request. */
function requestIds(): () => string {
  const boot = randomBytes(4).toString('hex');
  let n = 0;
  return () => `${boot}-${(++n).toString(36)}`;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const loggerInstance: FastifyBaseLogger = deps.logger;
  const clientErrors = new ClientErrorLog(deps.logger);
  const timeouts = deps.timeouts ?? DEFAULT_TIMEOUTS;
  const guard = routeGuard([apiTokenVerifier(deps.apiToken), ...(deps.verifiers ?? [])]);
  const app = Fastify({
    loggerInstance,
    // Per-request lines would flood journald on a Pi; errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    // No per-request child logger: with redaction configured, pino's child() recompiles the redact
    // paths each time (~2.5% of a /health request in a CPU profile). Lines that concern a request
    // carry reqId explicitly (daemon/http/error-handler.ts).
    childLoggerFactory: (logger) => logger,
    bodyLimit: deps.bodyLimit,
    genReqId: requestIds(),
    return503OnClosing: false, // our onRequest hook answers 503 in the spec envelope instead
    ...routerOptions(),
    // node closes a request whose headers or body trickle in past these (408 in the envelope, then the
    // socket); it checks every connectionsCheckingInterval, so that is kept short. Idle keep-alive
    // connections close after fastify's keepAliveTimeout (72 s).
    requestTimeout: timeouts.requestMs,
    http: { headersTimeout: timeouts.headersMs, requestTimeout: timeouts.requestMs, connectionsCheckingInterval: Math.min(1000, timeouts.headersMs) },
    frameworkErrors: frameworkErrors((request) => guard.authorizeUnrouted(request), clientErrors),
    clientErrorHandler: clientErrorHandler(clientErrors),
    schemaController: { compilersFactory: lazySchemaCompilers() },
  });
  installErrorHandlers(app, clientErrors);
  installBodyParsers(app);
  // Who the request acts for (daemon/auth/principal.ts); declared up front so every request has the same shape.
  app.decorateRequest('principal', null, []);
  // One callback hook for every request (each hook, and each promise, costs on the hot path):
  // 503 while stopping — /health answers for itself then, so probes see why — then the principal check.
  // A hook that replies does not call done (fastify Hooks.md).
  app.addHook('onRequest', (request, reply, done) => {
    if (request.headers.upgrade !== undefined) closeAfterReply(request, reply);
    if (deps.lifecycle.stopping && request.routeOptions.url !== '/health') {
      reply.header('connection', 'close');
      void reply.status(503).send(envelope('UNAVAILABLE', 'brain is shutting down', null));
      return;
    }
    const refusal = guard.authorize(request);
    // A refused request's body is never read: close rather than drain whatever the client still sends.
    if (refusal && request.headers.upgrade === undefined) closeAfterReply(request, reply);
    done(refusal);
  });
  // The route table at debug level: what the brain serves, for operators and the security tests.
  // Each route's principals are checked as it is registered, so a declaration that cannot work fails the start.
  const table: { method: string; url: string; principals: readonly string[]; public: boolean; websocket: boolean }[] = [];
  app.addHook('onRoute', (route) => {
    checkRouteDeclaration(route.url, route.config?.principals);
    const principals = routePrincipals(route.config);
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') table.push({ method, url: route.url, principals, public: principals.includes('anonymous'), websocket: route.websocket === true });
    }
  });
  installMetrics(app, deps.metrics, { public: deps.metricsPublic });
  await app.register(healthRoutes({ version: deps.version, lifecycle: deps.lifecycle }));
  for (const routes of deps.routes ?? []) await app.register(routes);
  await registerSockets(app, deps.sockets ?? []);
  deps.logger.debug({ routes: table }, 'routes');
  return app;
}

/**
 * @fastify/websocket adds an onRequest and an onResponse hook and wraps the handler of every route in
 * its context; registered at the root that cost GET /health ~8% of its throughput. In a context of
 * its own it touches only the WebSocket routes. Its server is decorated on the root, where the
 * shutdown closes the sockets with 1001.
 */
async function registerSockets(app: FastifyInstance, sockets: readonly FastifyPluginAsync[]): Promise<void> {
  let server: FastifyInstance['websocketServer'] | undefined;
  await app.register(async (scope) => {
    // A plain HTTP request to a WebSocket route is told to upgrade, in the envelope (426), instead of
    // @fastify/websocket's empty 404. Added before the plugin, so its own onRoute sees a wsHandler.
    scope.addHook('onRoute', (route) => {
      if (route.websocket !== true) return;
      route.wsHandler = route.handler as unknown as NonNullable<typeof route.wsHandler>;
      route.handler = upgradeRequired;
      route.websocket = false;
    });
    await scope.register(websocket, {
      errorHandler: socketErrorHandler,
      options: {
        maxPayload: 1024 * 1024,
        handleProtocols: chooseSubprotocol,
      },
    });
    server = scope.websocketServer;
    for (const routes of sockets) await scope.register(routes);
  });
  if (!server) throw new Error('@fastify/websocket registered no server');
  app.decorate('websocketServer', server);
}

/**
 * The subprotocol answered: svc.v1 (/v1/session), else feral.hup.v1 (/v1/node, node-protocol.md),
 * else — a HUP node that offered only its `feral-token-<key>` entry — that entry, because a client that
 * offers subprotocols fails the handshake when none is answered (docs/node-protocol.md "Transport").
 */
function chooseSubprotocol(protocols: Set<string>): string | false {
  if (protocols.has(WS_PROTOCOL)) return WS_PROTOCOL;
  if (protocols.has(HUP_SUBPROTOCOL)) return HUP_SUBPROTOCOL;
  for (const p of protocols) if (p.startsWith(HUP_TOKEN_PROTOCOL_PREFIX)) return p;
  return false;
}

function upgradeRequired(_request: FastifyRequest, reply: FastifyReply): void {
  void reply
    .status(426)
    .header('upgrade', 'websocket')
    .send(envelope('UPGRADE_REQUIRED', 'this is a WebSocket endpoint: connect with an Upgrade: websocket request (docs/protocol.md)', null));
}

/**
 * node hands an upgrade request's socket to @fastify/websocket, outside its HTTP keep-alive handling.
 * An upgrade that is answered in HTTP instead — refused by this hook (401, 403, 503), or sent to a path
 * that is not a WebSocket route, which answers as if Upgrade were absent (RFC 9110 7.8) — closes its
 * connection after the answer; else every such request leaks a socket that also blocks app.close().
 * An accepted upgrade never finishes its HTTP response: ws owns the socket from then on. (A request
 * with an Upgrade header that node did not treat as one just loses its keep-alive.)
 */
function closeAfterReply(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('connection', 'close');
  reply.raw.once('finish', () => request.raw.socket.destroy());
}
