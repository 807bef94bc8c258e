// GET /metrics (spec 4.12) and the HTTP metrics hook. Off-loopback callers get the exact 404 of an
// unmounted route unless SVC_METRICS_PUBLIC=1; with SVC_METRICS_ENDPOINT off the route does not exist.
import type { FastifyInstance } from 'fastify';
import { routeTemplate, type Metrics } from '../metrics/metrics';
import { PUBLIC } from './auth';

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/**
 * A request a reverse proxy on this machine passed on arrives from loopback but comes from elsewhere:
 * Tailscale Serve (remote access mode, docs/access.md) sets X-Forwarded-For on every request it
 * proxies, as proxies generally do (or Forwarded, RFC 7239). Such a request is not a loopback caller.
 */
const forwarded = (headers: { 'x-forwarded-for'?: string | undefined; forwarded?: string | undefined }): boolean => headers['x-forwarded-for'] !== undefined || headers.forwarded !== undefined;

export function installMetrics(app: FastifyInstance, metrics: Metrics, opts: { public: boolean }): void {
  if (!metrics.enabled) return;
  const templates = new Map<string, string>();
  app.addHook('onResponse', (request, reply, done) => {
    const url = request.routeOptions.url;
    let route = 'unmatched';
    if (url) {
      const cached = templates.get(url);
      if (cached === undefined) templates.set(url, (route = routeTemplate(url)));
      else route = cached;
    }
    metrics.httpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', { config: { principals: PUBLIC } }, async (request, reply) => {
    if (!opts.public && (forwarded(request.headers) || !isLoopback(request.socket.remoteAddress))) return reply.callNotFound();
    return reply.type(metrics.contentType).send(await metrics.render());
  });
}
