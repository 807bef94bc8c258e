// GET /health (spec 4.12): no token, no storage access, cheap enough to poll.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HealthResponse } from '../../protocol/health';
import type { Lifecycle } from '../lifecycle/lifecycle';

export const healthRoutes =
  (deps: { version: string; lifecycle: Lifecycle }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get('/health', { config: { public: true }, schema: { response: { 200: HealthResponse } } }, async () => ({
      status: deps.lifecycle.stopping ? ('stopping' as const) : ('ok' as const),
      version: deps.version,
      uptime_s: Math.round(deps.lifecycle.uptimeSeconds() * 1000) / 1000,
    }));
  };
