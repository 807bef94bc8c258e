// The node-agent's side of systemd's notify protocol (sd_notify(3); systemd/svc-node-agent.service is
// Type=notify): READY=1 after the first node_ack, STATUS= lines as the link and the devices change,
// WATCHDOG=1 only while the link loop is healthy (run-command.ts asks link.healthy() each time), and
// STOPPING=1. Like the brain's daemon/lifecycle/sd-notify.ts it sends through the systemd-notify
// binary (Node has no AF_UNIX datagram sockets; the unit sets NotifyAccess=all) and repeats READY=1,
// which older systemd may drop when the sender exits before it is read. It differs in what it needs:
// STATUS= updates and a watchdog gated on health rather than a free-running timer, so the node-agent,
// which may not import daemon/, keeps its own.
import { spawn } from 'node:child_process';

export interface AgentNotifier {
  ready(status: string): void;
  /** A new STATUS= line (sent only when it changed). */
  status(text: string): void;
  watchdog(): void;
  stopping(): void;
  stop(): void;
}

export interface NotifyEnv {
  NOTIFY_SOCKET?: string | undefined;
  WATCHDOG_USEC?: string | undefined;
  PATH?: string | undefined;
}

/** How often to ping: half of WatchdogSec=, at least 500 ms; null when systemd asked for no watchdog. */
export function watchdogEveryMs(env: NotifyEnv): number | null {
  const usec = Number(env.WATCHDOG_USEC);
  if (!env.NOTIFY_SOCKET || !Number.isFinite(usec) || usec <= 0) return null;
  return Math.max(500, usec / 2000);
}

export function createAgentNotifier(env: NotifyEnv, log: { warn(obj: object, msg: string): void }, binary = 'systemd-notify'): AgentNotifier {
  const timers: NodeJS.Timeout[] = [];
  let broken = false;
  let lastStatus = '';
  const send = (...assignments: string[]): void => {
    if (!env.NOTIFY_SOCKET || broken) return;
    // The child gets only what it needs; without PATH node looks the binary up in /usr/bin:/bin.
    const childEnv = { NOTIFY_SOCKET: env.NOTIFY_SOCKET, ...(env.PATH ? { PATH: env.PATH } : {}) };
    const child = spawn(binary, [`--pid=${process.pid}`, ...assignments], { stdio: 'ignore', env: childEnv });
    child.on('error', (err) => {
      broken = true;
      log.warn({ err: err.message }, `cannot notify systemd (${binary} unavailable)`);
    });
  };
  const statusLine = (text: string): string => `STATUS=${text.replace(/[\r\n]+/g, ' ').slice(0, 200)}`;
  return {
    ready: (status) => {
      lastStatus = status;
      send('READY=1', statusLine(status), `MAINPID=${process.pid}`);
      for (const ms of [1000, 4000]) timers.push(setTimeout(() => send('READY=1'), ms).unref());
    },
    status: (text) => {
      if (text === lastStatus) return;
      lastStatus = text;
      send(statusLine(text));
    },
    watchdog: () => send('WATCHDOG=1'),
    stopping: () => send('STOPPING=1', 'STATUS=stopping'),
    stop: () => {
      for (const t of timers) clearTimeout(t);
    },
  };
}
