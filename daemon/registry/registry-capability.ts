// The registry capability (issue 16 "Marketplace registry"; docs/registry.md): with `registry.enabled`
// the brain serves a marketplace registry under /registry/v1 (its rows in brain.db, its tarballs in
// <home>/marketplace/blobs), reviewed by the brain's admin. Enabled or not, it holds the brain's installs
// of published daemons (/api/daemons). Nothing heavy loads at start: the registry's code (and the tar
// reader) is imported when the capability is enabled, the daemon installer on its first request.
import { Type } from '@sinclair/typebox';
import { join } from 'node:path';
import { defineCapability, type CapabilityContext } from '../kernel/capability';
import { lazyModule } from '../kernel/lazy-module';
import { routes } from '../http/route-kit';
import { registryRoutes } from './registry-routes';
import type { Migration, RoutePlugin } from '../kernel/capability';
import type { DaemonInstalls } from './daemon-installs';
import { daemonInstallRoutes } from './registry-routes';
import { daemonDeliveryRoutes } from './daemon-delivery-routes';

export const REGISTRY = 'registry';
/** Where a brain's registry keeps its tarballs (blobs/): apart from <home>/registry, the default directory of `svc registry serve`. */
export const MARKETPLACE_DIR = 'marketplace';

export const RegistrySettings = Type.Object(
  {
    enabled: Type.Boolean({ default: false, description: 'Serve a marketplace registry under /registry/v1 (docs/registry.md)' }),
    max_archive_bytes: Type.Integer({ minimum: 64 * 1024, maximum: 256 * 1024 * 1024, default: 16 * 1024 * 1024, description: 'Largest published archive, and the most its files may add up to unpacked' }),
    max_entries: Type.Integer({ minimum: 1, maximum: 100_000, default: 1000, description: 'Most files and folders in one archive' }),
    max_pending_per_key: Type.Integer({ minimum: 1, maximum: 10_000, default: 20, description: 'Submissions one publisher key may have waiting for review' }),
    max_pending: Type.Integer({ minimum: 1, maximum: 100_000, default: 200, description: 'Submissions waiting for review in all' }),
  },
  { additionalProperties: false, default: {} },
);
export type RegistrySettings = typeof RegistrySettings.static;

/** The archive limits and the publish body bound that follow from the settings. */
export function registryLimits(settings: RegistrySettings) {
  const archive = { maxEntries: settings.max_entries, maxEntryBytes: settings.max_archive_bytes, maxTotalBytes: settings.max_archive_bytes, maxPathLength: 240 };
  // base64 is 4/3 of the bytes; the JSON around it (signature, key) is well under 64 KiB.
  return { archive, maxPendingPerKey: settings.max_pending_per_key, maxPending: settings.max_pending, publishBodyLimit: Math.ceil((settings.max_archive_bytes * 4) / 3) + 64 * 1024 };
}

/** The installed daemons' table, a component of its own (here, so that migrating it loads no installer code). */
export const DAEMONS_COMPONENT = 'daemons';
export const DAEMON_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'daemons installed from a registry, one version per node_id',
    up: `
      CREATE TABLE installed_daemons (
        node_id TEXT PRIMARY KEY,
        version TEXT NOT NULL,
        entry TEXT NOT NULL,
        display_name TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        key_id TEXT NOT NULL,
        source TEXT NOT NULL,
        installed_at TEXT NOT NULL,
        path TEXT NOT NULL
      );
    `,
  },
];

export const registryCapability = defineCapability({
  name: REGISTRY,
  settings: RegistrySettings,
  create: async (context, settings) => {
    const limits = registryLimits(settings);
    context.store.migrate(DAEMONS_COMPONENT, DAEMON_MIGRATIONS);
    const installs = lazyModule(async (): Promise<DaemonInstalls> => {
      const { DaemonInstalls } = await import('./daemon-installs');
      return new DaemonInstalls(context.store, context.home, context.vault, context.clock, { fetch: globalThis.fetch, timeoutMs: 60_000, limits: limits.archive });
    });
    const plugins: RoutePlugin[] = [routes(daemonInstallRoutes(installs)), daemonDeliveryRoutes(context, limits.archive)];
    if (!settings.enabled) return { routes: plugins };
    const served = await serveRegistry(context, limits);
    return { migrations: served.migrations, routes: [...plugins, served.route], parts: [served.part] };
  },
});

async function serveRegistry(context: CapabilityContext, limits: ReturnType<typeof registryLimits>) {
  const { RegistryService, REGISTRY_MIGRATIONS } = await import('./registry-service');
  const registry = new RegistryService(context.store, join(context.home, MARKETPLACE_DIR), context.clock, limits);
  return {
    migrations: REGISTRY_MIGRATIONS,
    route: routes(registryRoutes(registry, limits.publishBodyLimit)),
    part: { name: 'registry', start: () => registry.start() },
  };
}
