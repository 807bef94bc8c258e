// systemd notify protocol (sd_notify(3)) for Type=notify units: READY=1, STOPPING=1, WATCHDOG=1.
// Node cannot open an AF_UNIX datagram socket, so messages go through the systemd-notify binary; the
// unit sets NotifyAccess=all so systemd accepts them from that child. systemd may drop a message
// whose sender exited before it was read (systemd < 254), so READY=1 is repeated twice more — a
// repeated READY=1 is ignored by systemd — and the watchdog pings at a third of its interval.
import { spawn } from 'node:child_process';
import type { Logger } from 'pino';

export interface Notifier {
  ready(): void;
  stopping(): void;
  startWatchdog(): void;
  stop(): void;
}

/** How often to ping: a third of WatchdogSec=, never faster than 1 s; null when systemd asked for none. */
export function watchdogIntervalMs(env: { NOTIFY_SOCKET?: string | undefined; WATCHDOG_USEC?: string | undefined }): number | null {
  const usec = Number(env.WATCHDOG_USEC);
  if (!env.NOTIFY_SOCKET || !Number.isFinite(usec) || usec <= 0) return null;
  return Math.max(1000, usec / 3000);
}

export function createNotifier(
  env: { NOTIFY_SOCKET?: string | undefined; WATCHDOG_USEC?: string | undefined; PATH?: string | undefined },
  logger: Logger,
  binary = 'systemd-notify',
): Notifier {
  const timers: NodeJS.Timeout[] = [];
  let broken = false;
  const send = (...assignments: string[]): void => {
    if (!env.NOTIFY_SOCKET || broken) return;
    // The child gets only what it needs: never the brain's secrets (SVC_VAULT_KEY, SVC_API_TOKEN).
    // Without PATH, node looks the binary up in /usr/bin:/bin.
    const childEnv = { NOTIFY_SOCKET: env.NOTIFY_SOCKET, ...(env.PATH ? { PATH: env.PATH } : {}) };
    const child = spawn(binary, [`--pid=${process.pid}`, ...assignments], { stdio: 'ignore', env: childEnv });
    child.on('error', (err) => {
      broken = true;
      logger.warn({ err }, `cannot notify systemd (${binary} unavailable)`);
    });
  };
  const later = (ms: number, fn: () => void): void => {
    timers.push(setTimeout(fn, ms).unref());
  };
  return {
    ready: () => {
      send('READY=1', `STATUS=serving`, `MAINPID=${process.pid}`);
      later(1000, () => send('READY=1'));
      later(4000, () => send('READY=1'));
    },
    stopping: () => send('STOPPING=1', 'STATUS=stopping'),
    startWatchdog: () => {
      const every = watchdogIntervalMs(env);
      if (every !== null) timers.push(setInterval(() => send('WATCHDOG=1'), every).unref());
    },
    stop: () => {
      for (const t of timers) clearTimeout(t);
    },
  };
}
