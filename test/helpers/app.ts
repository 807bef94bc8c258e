// buildApp with plain fakes, for app.inject() tests of routes and hooks (no listen, no disk).
import { pino } from 'pino';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { buildApp } from '../../daemon/app';
import { createMetrics, type Metrics } from '../../daemon/metrics/metrics';
import { Lifecycle } from '../../daemon/lifecycle/lifecycle';
import type { CredentialVerifier } from '../../daemon/auth/authenticate';

export const TEST_TOKEN = 'test-token-0123456789';
export const auth = { authorization: `Bearer ${TEST_TOKEN}` };

export interface TestApp {
  app: FastifyInstance;
  metrics: Metrics;
  lifecycle: Lifecycle;
}

export async function testApp(opts: { routes?: FastifyPluginAsync[]; sockets?: FastifyPluginAsync[]; metricsEnabled?: boolean; metricsPublic?: boolean; bodyLimit?: number; verifiers?: CredentialVerifier[] } = {}): Promise<TestApp> {
  const metrics = createMetrics(opts.metricsEnabled ?? true);
  const lifecycle = new Lifecycle();
  const app = await buildApp({
    logger: pino({ level: 'silent' }),
    version: '0.0.0-test',
    apiToken: TEST_TOKEN,
    metrics,
    metricsPublic: opts.metricsPublic ?? false,
    lifecycle,
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
    routes: opts.routes ?? [],
    sockets: opts.sockets ?? [],
    verifiers: opts.verifiers ?? [],
  });
  await app.ready();
  return { app, metrics, lifecycle };
}
