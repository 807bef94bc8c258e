// The brain's process: the only place that reads process.env (STYLE.md 1). It resolves the home and
// the settings, holds the instance lock, reads the credentials the environment gives, hands them to
// assembleBrain (daemon/brain.ts, which builds everything else), starts the parts, tells systemd
// (READY=1, watchdog, STOPPING=1) and turns signals into an orderly stop in reverse order.
import { mkdirSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { deepFreeze, loadSettings, SettingsError, settingsFormat } from './config/load-settings';
import { applyEnvironment, clockOffset, EnvironmentError, resolveHome } from './config/environment';
import type { Settings } from './config/settings-schema';
import { createLogger } from './kernel/logger';
import { InstanceLock, InstanceLockedError } from './store/instance-lock';
import { loadVaultKey, VaultKeyError } from './vault/vault-key';
import { loadApiToken } from './auth/api-token';
import { tightenHome } from './fs/private-home';
import { Lifecycle } from './lifecycle/lifecycle';
import { createNotifier } from './lifecycle/sd-notify';
import { startParts, stopParts, type Part } from './kernel/parts';
import { SecretScrubber } from './agent/tools/secret-scrubber';
import { assembleBrain, ListenError } from './brain';
import { CAPABILITIES } from './capabilities';

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

function configure(flags: ServeFlags): { home: string; settings: Settings; clockOffsetMs: number } {
  const home = resolveHome(process.env, flags.home);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  try {
    const settings = deepFreeze(applyEnvironment(loadSettings(join(home, 'settings.json'), settingsFormat(CAPABILITIES)), process.env, flags));
    return { home, settings, clockOffsetMs: clockOffset(process.env) };
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
  let clockOffsetMs: number;
  try {
    ({ home, settings, clockOffsetMs } = configure(flags));
  } catch (err) {
    if (!(err instanceof StartupError)) throw err;
    process.stderr.write(`svc: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  // Secrets are known once the vault opens (run); until then the scrubber has none to look for.
  const scrubber = new SecretScrubber();
  const logger = createLogger(settings.log.level, undefined, scrubber);
  try {
    await run(home, settings, logger, scrubber, clockOffsetMs);
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

async function run(home: string, settings: Settings, logger: Logger, scrubber: SecretScrubber, clockOffsetMs: number): Promise<void> {
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

  let vaultKey;
  try {
    vaultKey = loadVaultKey({ home, envKey: process.env.SVC_VAULT_KEY, credentialsDir: process.env.CREDENTIALS_DIRECTORY });
  } catch (err) {
    if (err instanceof VaultKeyError) throw new StartupError(err.message, EXIT_CONFIG);
    throw err;
  }
  const apiToken = loadApiToken({ home, envToken: process.env.SVC_API_TOKEN, credentialsDir: process.env.CREDENTIALS_DIRECTORY });
  chmodSync(home, 0o700);

  // SVC_CLOCK_OFFSET_MS: the brain's clock as a board with a wrong clock would have it (tests of sync under skew).
  const clock = clockOffsetMs === 0 ? undefined : { now: () => Date.now() + clockOffsetMs };
  const brain = await assembleBrain({ home, settings, logger, version: VERSION, lifecycle, apiToken, vaultKey: vaultKey.key, scrubber, ...(clock === undefined ? {} : { clock }) }, CAPABILITIES);
  try {
    await startParts(brain.parts, logger);
  } catch (err) {
    if (err instanceof ListenError) throw new StartupError(err.message, 1);
    throw err;
  }

  const notifier = createNotifier(process.env, logger);
  // Before anything says the brain is up (the log line, READY=1): whoever reads it may signal at once,
  // and a signal before the handlers exist would kill the brain without stopping its parts.
  installSignalHandlers({ lifecycle, logger, parts: brain.parts, notifier, lock, timeoutMs: settings.server.shutdown_timeout_ms });
  notifier.ready();
  notifier.startWatchdog();
  // Where it listens is the access mode's choice unless server.host pins it (docs/access.md).
  const bound = brain.listener.addresses();
  const host = bound[0]?.host ?? settings.server.host;
  const port = bound[0]?.port ?? settings.server.port;
  logger.info(
    { host, port, addresses: bound.map((a) => a.host), home, version: VERSION, vault: brain.vault.status().state, vault_key: vaultKey.source, capabilities: brain.capabilities },
    `svc brain listening on http://${host.includes(':') ? `[${host}]` : host}:${port}`,
  );
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
