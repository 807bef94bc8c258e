// buildApp(deps): the brain's HTTP/WebSocket surface without listen() (STYLE.md 7). Tests call it with
// plain fakes and use app.inject(); daemon/main.ts hands it the real parts.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import websocket from '@fastify/websocket';
import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import type { Metrics } from './metrics/metrics';
import type { Lifecycle } from './lifecycle/lifecycle';
import { installErrorHandlers, envelope } from './http/error-handler';
import { authFailure, WS_PROTOCOL } from './http/auth';
import { installMetrics } from './http/metrics-routes';
import { healthRoutes } from './http/health-routes';
import { lazySchemaCompilers } from './http/lazy-schemas';

export interface AppDeps {
  logger: Logger;
  version: string;
  apiToken: string;
  metrics: Metrics;
  metricsPublic: boolean;
  lifecycle: Lifecycle;
  bodyLimit: number;
  /** Resource plugins (one per resource group), registered after the core hooks. */
  routes?: readonly FastifyPluginAsync[];
}

/** Request ids unique per process and distinguishable across restarts: `<boot>-<counter>`, cheaper than a UUID per request. */
function requestIds(): () => string {
  const boot = randomBytes(4).toString('hex');
  let n = 0;
  return () => `${boot}-${(++n).toString(36)}`;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const loggerInstance: FastifyBaseLogger = deps.logger;
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
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: false } },
    schemaController: { compilersFactory: lazySchemaCompilers() },
  });
  installErrorHandlers(app);
  // Registered before the 503 and auth hooks: its onRequest hook marks upgrade requests, and only a
  // marked request has its raw socket destroyed after a refusal (else every 401 upgrade leaks a socket
  // that also blocks app.close() on shutdown).
  await app.register(websocket, {
    options: {
      maxPayload: 1024 * 1024,
      handleProtocols: (protocols: Set<string>) => (protocols.has(WS_PROTOCOL) ? WS_PROTOCOL : false),
    },
  });
  // One callback hook for every request (each hook, and each promise, costs on the hot path):
  // 503 while stopping — /health answers for itself then, so probes see why — then the token check.
  // A hook that replies does not call done (fastify Hooks.md).
  app.addHook('onRequest', (request, reply, done) => {
    if (deps.lifecycle.stopping && request.routeOptions.url !== '/health') {
      reply.header('connection', 'close');
      void reply.status(503).send(envelope('UNAVAILABLE', 'brain is shutting down', null));
      return;
    }
    done(authFailure(request, deps.apiToken));
  });
  installMetrics(app, deps.metrics, { public: deps.metricsPublic });
  await app.register(healthRoutes({ version: deps.version, lifecycle: deps.lifecycle }));
  for (const routes of deps.routes ?? []) await app.register(routes);
  return app;
}
