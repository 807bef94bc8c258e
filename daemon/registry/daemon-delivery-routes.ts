// The delivery routes (protocol/daemons.ts; docs/registry.md "Delivering daemons to node-agents"):
// /api/daemons/mine[/bundle|/status] for node-agents by their node key (the daemon is the one
// installed for the key's node id, so a node sees only its own) and /api/daemons/delivery for the
// admin. Mounted by the registry capability whether or not it serves a registry. The table is migrated
// here, at start; the packer and sha256 (with the tar code) load on the first request.
import { createHash } from 'node:crypto';
import type { CapabilityContext, RoutePlugin } from '../kernel/capability';
import { AppError } from '../kernel/errors';
import { lazyModule } from '../kernel/lazy-module';
import { routes } from '../http/route-kit';
import { ErrorEnvelope } from '../../protocol/errors';
import { DAEMONS_BUNDLE_PATH, DAEMONS_DELIVERY_PATH, DAEMONS_MINE_PATH, DAEMONS_STATUS_PATH, DaemonDeliveryList, DaemonReport, DaemonStatusBody, MyDaemon } from '../../protocol/daemons';
import type { ArchiveLimits } from '../../signing/archive';
import { DaemonDeliveries, DELIVERY_COMPONENT, DELIVERY_MIGRATIONS } from './daemon-delivery';

const errors = { 400: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope };
const nodes = { principals: ['node'] } as const;
/** The headers of a bundle download (the same names as a registry download's, daemon/registry/registry-routes.ts). */
export const BUNDLE_HEADERS = { sha256: 'x-svc-sha256', version: 'x-svc-version' } as const;

const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The node id of a node principal (the routes accept no other kind; this guards a wrong declaration). */
function nodeIdOf(principal: { kind: string; id?: string }): string {
  if (principal.kind !== 'node' || principal.id === undefined) throw new AppError('FORBIDDEN', 'only a node-agent, by its node key, has a daemon of its own');
  return principal.id;
}

/** The delivery service over the context's store; its table is migrated now. */
export function daemonDeliveries(context: Pick<CapabilityContext, 'store' | 'clock'>, limits: ArchiveLimits): DaemonDeliveries {
  context.store.migrate(DELIVERY_COMPONENT, DELIVERY_MIGRATIONS);
  const packer = lazyModule(() => import('./daemon-delivery-bundle'));
  return new DaemonDeliveries(context.store, context.clock, async (path) => (await packer()).packInstalledDaemon(path, limits), sha256Hex);
}

/** The routes over `deliveries`. */
export function deliveryRoutes(deliveries: DaemonDeliveries): RoutePlugin {
  return routes(async (app) => {
    app.get(DAEMONS_MINE_PATH, { config: nodes, schema: { response: { 200: MyDaemon, ...errors } } }, async (request) => ({ daemon: await deliveries.offer(nodeIdOf(request.principal)) }));

    app.get(DAEMONS_BUNDLE_PATH, { config: nodes }, async (request, reply) => {
      const { bytes, version } = await deliveries.bundle(nodeIdOf(request.principal));
      return reply.header('content-type', 'application/gzip').header(BUNDLE_HEADERS.sha256, sha256Hex(bytes)).header(BUNDLE_HEADERS.version, version).send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    });

    app.post(DAEMONS_STATUS_PATH, { config: nodes, schema: { body: DaemonStatusBody, response: { 200: DaemonReport, ...errors } } }, async (request) => deliveries.report(nodeIdOf(request.principal), request.body));

    app.get(DAEMONS_DELIVERY_PATH, { schema: { response: { 200: DaemonDeliveryList, ...errors } } }, async () => ({ deliveries: deliveries.deliveries() }));
  });
}

/** What the registry capability mounts: the service over its context, and its routes. */
export const daemonDeliveryRoutes = (context: Pick<CapabilityContext, 'store' | 'clock'>, limits: ArchiveLimits): RoutePlugin => deliveryRoutes(daemonDeliveries(context, limits));
