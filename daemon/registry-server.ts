// `svc registry serve` (docs/registry.md "Running a registry"): a standalone HTTP server with only the
// registry, for a household or a club, on the same HTTP layer as the brain (daemon/app.ts: the error
// envelope, /health, the route guard) and the same routes as the registry capability. Its directory
// (default <home>/registry) holds registry.db, the tarballs (blobs/), a pid file that keeps a second
// server off it, and `reviewer-token`: the admin credential of this server, made at the first start
// (0600) and printed that once. Whoever holds it reviews submissions (/registry/v1/review).
//
// A composition root like daemon/main.ts: it constructs the store, the service and the server, and
// turns SIGTERM/SIGINT into an orderly stop.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { buildApp } from './app';
import { createLogger } from './kernel/logger';
import { createMetrics } from './metrics/metrics';
import { Lifecycle } from './lifecycle/lifecycle';
import { SqliteStore } from './store/sqlite-store';
import { InstanceLock, InstanceLockedError } from './store/instance-lock';
import { createOnce, readIfExists } from '../mesh/create-once';
import { registryLimits, RegistrySettings } from './registry/registry-capability';
import { registryRoutes } from './registry/registry-routes';
import { REGISTRY_COMPONENT, REGISTRY_MIGRATIONS, RegistryService } from './registry/registry-service';

export const REVIEWER_TOKEN_FILE = 'reviewer-token';

/** The directory is held by a running registry server. */
export class RegistryInUseError extends Error {}

export interface RegistryServerOptions {
  readonly dir: string;
  readonly host: string;
  readonly port: number;
  readonly version: string;
  readonly logLevel: string;
  /** Where the address and the first start's reviewer token are told. */
  readonly out: NodeJS.WritableStream;
}

export interface RunningRegistry {
  readonly url: string;
  stop(): Promise<void>;
}

/** The reviewer token of `dir`, made when missing; `made` says whether this call made it. */
export function loadOrCreateReviewerToken(dir: string): { token: string; made: boolean } {
  const file = join(dir, REVIEWER_TOKEN_FILE);
  const existing = readIfExists(file)?.trim();
  if (existing) return { token: existing, made: false };
  const fresh = randomBytes(32).toString('base64url');
  createOnce(file, `${fresh}\n`);
  const kept = readIfExists(file)?.trim() ?? '';
  return { token: kept, made: kept === fresh };
}

/** Starts the registry server; resolves once it listens. */
export async function startRegistryServer(options: RegistryServerOptions): Promise<RunningRegistry> {
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const lock = new InstanceLock(options.dir);
  try {
    lock.acquire();
  } catch (err) {
    if (err instanceof InstanceLockedError) throw new RegistryInUseError(`another svc registry serve (pid ${err.pid}) is running on ${options.dir}`);
    throw err;
  }
  const logger = createLogger(options.logLevel);
  const store = new SqliteStore(join(options.dir, 'registry.db'), { logger });
  store.migrate(REGISTRY_COMPONENT, REGISTRY_MIGRATIONS);
  const limits = registryLimits(Value.Default(RegistrySettings, {}) as RegistrySettings);
  const registry = new RegistryService(store, options.dir, { now: () => Date.now() }, limits);
  registry.start();
  const reviewer = loadOrCreateReviewerToken(options.dir);
  const lifecycle = new Lifecycle();
  const app = await buildApp({
    logger,
    version: options.version,
    apiToken: reviewer.token,
    metrics: createMetrics(false),
    metricsPublic: false,
    lifecycle,
    bodyLimit: 1024 * 1024,
    routes: [registryRoutes(registry, limits.publishBodyLimit)],
  });
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  options.out.write(`svc registry listening on ${url} (directory ${options.dir})\n`);
  if (reviewer.made) options.out.write(`reviewer token (shown once; kept in ${join(options.dir, REVIEWER_TOKEN_FILE)}, 0600): ${reviewer.token}\n`);
  return {
    url,
    stop: async () => {
      lifecycle.stopping = true;
      await app.close();
      store.close();
      lock.release();
      logger.flush();
    },
  };
}

/** Runs the server in the foreground until SIGTERM or SIGINT. */
export async function serveRegistry(options: RegistryServerOptions): Promise<void> {
  const running = await startRegistryServer(options);
  const stop = (): void => {
    running.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`svc registry: stop failed: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
