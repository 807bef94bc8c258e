// GET /health (spec 4.12): public (no credential read), no storage access, cheap enough to poll.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HealthResponse } from '../../protocol/health';
import type { Lifecycle } from '../lifecycle/lifecycle';
import { PUBLIC } from './auth';

export const healthRoutes =
  (deps: { version: string; lifecycle: Lifecycle }): FastifyPluginAsyncTypebox =>
  async (app) => {
    // 200 while serving; 503 with status "stopping" during shutdown, so a load balancer drains the brain.
    // The schema documents the answer; JSON.stringify writes it: compiling a fast-json-stringify
    // serializer for three fields cost the first request (what every start-up probe waits for) ~15 ms.
    const serializerCompiler = () => (body: unknown) => JSON.stringify(body);
    app.get('/health', { config: { principals: PUBLIC }, schema: { response: { 200: HealthResponse, 503: HealthResponse } }, serializerCompiler }, async (_request, reply) => {
      const stopping = deps.lifecycle.stopping;
      return reply.status(stopping ? 503 : 200).send({
        status: stopping ? 'stopping' : 'ok',
        version: deps.version,
        uptime_s: Math.round(deps.lifecycle.uptimeSeconds() * 1000) / 1000,
      });
    });
  };
