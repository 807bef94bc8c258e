// The brain's composition root: the only place that reads process.env and constructs concrete parts
// (STYLE.md 1). Start order: config → lock → store → vault → HTTP → READY=1. Stop runs in reverse.
import { mkdirSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { loadSettings, SettingsError } from './config/load-settings';
import { applyEnvironment, EnvironmentError, resolveHome } from './config/environment';
import type { Settings } from './config/settings-schema';
import { createLogger } from './kernel/logger';
import { InstanceLock, InstanceLockedError } from './store/instance-lock';
import { SqliteStore } from './store/sqlite-store';
import { createMetrics } from './metrics/metrics';
import { Vault } from './vault/vault';
import { loadVaultKey, VaultKeyError } from './vault/vault-key';
import { loadApiToken } from './auth/api-token';
import { tightenHome } from './fs/private-home';
import { buildApp } from './app';
import { Lifecycle } from './lifecycle/lifecycle';
import { createNotifier } from './lifecycle/sd-notify';
import { startParts, stopParts, type Part } from './kernel/parts';
import { createMemory } from './memory/create-memory';
import { llmSummariser } from './memory/llm-summariser';
import { DeferredSessionPort } from './memory/session-port';
import { memoryRoutes } from './http/memory-routes';
import { createProviderChain } from './providers/create-provider-chain';
import { LocalProvider } from './providers/local/local-provider';
import { providerRoutes } from './http/provider-routes';
import { Agent } from './agent/agent';
import { emptyDevices } from './kernel/ports';
import { SecretScrubber, vaultSecrets } from './agent/tools/secret-scrubber';
import { IdentityFiles } from './identity/identity-files';
import { DigitalTwin } from './identity/digital-twin';
import { sessionRoutes } from './ws/session-routes';
import { dashboardRoutes } from './http/dashboard-routes';
import { identityRoutes } from './http/identity-routes';

declare const __SVC_VERSION__: string;
export const VERSION = typeof __SVC_VERSION__ === 'string' ? __SVC_VERSION__ : '0.0.0-dev';

/** Exit codes: 78 = configuration error (EX_CONFIG; systemd does not restart on it), 75 = home in use. */
export const EXIT_CONFIG = 78;
export const EXIT_LOCKED = 75;

export interface ServeFlags {
  home?: string;
  host?: string;
  port?: number;
}

class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

function configure(flags: ServeFlags): { home: string; settings: Settings } {
  const home = resolveHome(process.env, flags.home);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  try {
    const settings = applyEnvironment(loadSettings(join(home, 'settings.json')), process.env, flags);
    return { home, settings };
  } catch (err) {
    if (err instanceof SettingsError || err instanceof EnvironmentError) throw new StartupError(err.message, EXIT_CONFIG);
    throw err;
  }
}

/** Set once run() holds $SVC_HOME; released if startup then fails, so no stale pid file is left. */
let heldLock: InstanceLock | null = null;

/** Runs the brain in the foreground until SIGTERM/SIGINT. */
export async function serve(flags: ServeFlags): Promise<void> {
  // Everything the brain creates in $SVC_HOME is private whatever umask it was started with: files
  // 0600, directories 0700 (issue 8 §5), including those made by libraries (the database's journal
  // and lock directory) that take the default modes.
  process.umask(0o077);
  let home: string;
  let settings: Settings;
  try {
    ({ home, settings } = configure(flags));
  } catch (err) {
    if (!(err instanceof StartupError)) throw err;
    process.stderr.write(`svc: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  // Secrets are known once the vault opens (run); until then the scrubber has none to look for.
  const scrubber = new SecretScrubber();
  const logger = createLogger(settings.log.level, undefined, scrubber);
  try {
    await run(home, settings, logger, scrubber);
  } catch (err) {
    heldLock?.release();
    if (err instanceof StartupError) {
      logger.fatal(err.message);
      logger.flush();
      process.stderr.write(`svc: ${err.message}\n`);
      process.exit(err.exitCode);
    }
    throw err;
  }
}

async function run(home: string, settings: Settings, logger: Logger, scrubber: SecretScrubber): Promise<void> {
  const lifecycle = new Lifecycle();
  const lock = new InstanceLock(home);
  try {
    if (lock.acquire()) logger.warn({ home }, 'took over the lock of a brain that is no longer running');
    heldLock = lock;
  } catch (err) {
    if (err instanceof InstanceLockedError) throw new StartupError(err.message, EXIT_LOCKED);
    throw err;
  }
  const cleared = lock.clearStaleDatabaseLocks();
  if (cleared.length > 0) logger.warn({ cleared }, 'removed database locks left by a killed brain');
  const opened = tightenHome(home);
  if (opened.length > 0) logger.warn({ files: opened }, 'made files in the home private (0600/0700); they were readable by others');

  const metrics = createMetrics(settings.metrics.endpoint);
  const store = new SqliteStore(join(home, 'brain.db'), { synchronous: settings.storage.synchronous, groupCommit: settings.storage.group_commit, logger: logger.child({ part: 'store' }) });

  let vaultKey;
  try {
    vaultKey = loadVaultKey({ home, envKey: process.env.SVC_VAULT_KEY, credentialsDir: process.env.CREDENTIALS_DIRECTORY });
  } catch (err) {
    if (err instanceof VaultKeyError) throw new StartupError(err.message, EXIT_CONFIG);
    throw err;
  }
  const vault = new Vault({ file: join(home, 'vault.json'), key: vaultKey.key, onDecryptError: () => metrics.vaultDecryptError() });
  const vaultStatus = vault.open();
  if (vaultStatus.state === 'locked') logger.error({ reason: vaultStatus.reason }, 'vault is locked; secrets are unavailable until the right key is provided');

  const apiToken = loadApiToken({ home, envToken: process.env.SVC_API_TOKEN, credentialsDir: process.env.CREDENTIALS_DIRECTORY });
  chmodSync(home, 0o700);
  const secrets = vaultSecrets(vault, [apiToken]);
  scrubber.use(secrets);

  const parts: Part[] = [{ name: 'store', stop: () => store.close() }];
  const embeddingKey = settings.memory.embeddings.api_key;
  const sessionPort = new DeferredSessionPort();
  const local = new LocalProvider();
  const memory = createMemory({
    sessions: sessionPort,
    cannedReplies: local.cannedReplies(),
    store,
    settings: settings.memory,
    logger: logger.child({ part: 'memory' }),
    embeddingApiKey: embeddingKey && vaultStatus.state === 'ok' ? vault.get('providers', embeddingKey) : undefined,
  });
  parts.push(...memory.parts);
  const identity = new IdentityFiles(home);
  const created = identity.start();
  if (created.length > 0) logger.info({ created }, 'created identity files from templates; edit them or run `svc setup`');
  // The failover chain (docs/providers.md): providers.chain is the Provider the turn loop streams from.
  const providers = createProviderChain({ settings: settings.providers, vault, store, metrics, logger, local, reloadVault: () => vault.open().state, scrub: (text) => scrubber.scrub(text) });
  // Episodes are summarised by the model once there is one (extractive when it fails, is busy or is the local agent).
  memory.memory.useSummariser(llmSummariser({ provider: providers.chain }));
  const agent = new Agent({
    provider: providers.chain,
    memory: memory.memory,
    identity,
    devices: emptyDevices,
    store,
    metrics,
    logger: logger.child({ part: 'agent' }),
    settings: settings.agent,
    brain: { version: VERSION, uptimeSeconds: () => lifecycle.uptimeSeconds(), stopping: () => lifecycle.stopping },
    secrets,
    workingLimits: { maxItems: settings.memory.working.max_items, maxBytes: settings.memory.working.max_bytes },
  });
  sessionPort.attach(agent.sessions);
  // Listed before http: stop runs in reverse, so sockets close first, then sessions end and write their episodes.
  parts.push({ name: 'agent', start: () => agent.start(), stop: () => agent.stop() });
  const ws = settings.agent.websocket;
  const app = await buildApp({
    logger,
    version: VERSION,
    apiToken,
    metrics,
    metricsPublic: settings.metrics.public,
    lifecycle,
    bodyLimit: settings.server.body_limit_bytes,
    timeouts: { requestMs: settings.server.request_timeout_ms, headersMs: Math.min(settings.server.headers_timeout_ms, settings.server.request_timeout_ms) },
    routes: [
      memoryRoutes(memory),
      providerRoutes({ keys: providers.keys, models: providers.models, scrubber }),
      dashboardRoutes({ agent, identity }),
      identityRoutes({ files: identity, twin: new DigitalTwin(identity, agent.memory, { relevanceFloor: settings.memory.search.relevance_floor }) }),
    ],
    sockets: [sessionRoutes({ sessions: agent.sessions, logger: logger.child({ part: 'ws' }), options: { heartbeatMs: ws.heartbeat_ms, maxBufferedBytes: ws.max_buffered_bytes } })],
  });
  parts.push(httpPart(app, settings, logger));
  await startParts(parts, logger);

  const notifier = createNotifier(process.env, logger);
  notifier.ready();
  notifier.startWatchdog();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : settings.server.port;
  logger.info({ host: settings.server.host, port, home, version: VERSION, vault: vaultStatus.state, vault_key: vaultKey.source }, `svc brain listening on http://${settings.server.host}:${port}`);

  installSignalHandlers({ lifecycle, logger, parts, notifier, lock, timeoutMs: settings.server.shutdown_timeout_ms });
}

function httpPart(app: FastifyInstance, settings: Settings, logger: Logger): Part {
  return {
    name: 'http',
    start: async () => {
      try {
        await app.listen({ host: settings.server.host, port: settings.server.port });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
          throw new StartupError(`cannot listen on ${settings.server.host}:${settings.server.port}: ${code} (set --port, SVC_PORT or server.port)`, 1);
        }
        throw err;
      }
    },
    stop: async () => {
      // Clients hear "going away" (1001) before the listener closes (spec: WebSockets told).
      for (const client of app.websocketServer.clients) client.close(1001, 'brain shutting down');
      await app.close();
      logger.debug('http closed');
    },
  };
}

function installSignalHandlers(ctx: {
  lifecycle: Lifecycle;
  logger: Logger;
  parts: Part[];
  notifier: ReturnType<typeof createNotifier>;
  lock: InstanceLock;
  timeoutMs: number;
}): void {
  const { lifecycle, logger } = ctx;
  const shutdown = (signal: string): void => {
    if (lifecycle.stopping) {
      logger.warn({ signal }, 'second signal: exiting at once');
      ctx.lock.release();
      process.exit(1);
    }
    lifecycle.stopping = true;
    ctx.notifier.stopping();
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error({ timeoutMs: ctx.timeoutMs }, 'shutdown did not finish in time; exiting');
      ctx.lock.release();
      process.exit(1);
    }, ctx.timeoutMs).unref();
    stopParts(ctx.parts, logger, Math.max(100, ctx.timeoutMs - 500))
      .then(() => {
        ctx.notifier.stop();
        ctx.lock.release();
        logger.info('stopped');
        logger.flush();
        process.exitCode = 0;
        setImmediate(() => process.exit(0));
      })
      .catch((err: unknown) => {
        logger.fatal({ err }, 'shutdown failed');
        ctx.lock.release();
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('unhandledRejection', (err) => {
    logger.fatal({ err }, 'unhandled rejection');
    logger.flush();
    ctx.lock.release();
    process.exit(1);
  });
}
