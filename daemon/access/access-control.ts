// The access mode (docs/access.md): where the listener listens (localhost: 127.0.0.1 and ::1; lan:
// 0.0.0.0 and ::) and whether Tailscale Serve tunnels the tailnet to it (remote). A change is written
// to settings.json first, then applied without a restart (the listener moves, open connections it no
// longer covers are closed), then announced on the bus as `access_mode` with the base URLs a device
// can use — at start, on every change, and when the machine's addresses change. Changes run one at a
// time. A listen address pinned by server.host, SVC_HOST or --host is left alone: the mode follows it.
import type { Logger } from 'pino';
import type { AccessStatus, ListenerMode, Tunnel } from '../../protocol/access';
import type { Clock } from '../kernel/capability';
import { AppError } from '../kernel/errors';
import type { EventBus } from '../kernel/event-bus';
import type { AccessMode, BrainEvent } from '../kernel/events';
import { covered, type ListenerPort } from '../kernel/listener';
import { OneAtATime } from '../kernel/one-at-a-time';
import { persistAccess, type AccessSettings } from './access-settings';
import { baseUrls, type Interfaces } from './base-urls';
import { TailscaleError } from './tailscale';

/** Where each listener mode listens. */
export const MODE_HOSTS: Readonly<Record<ListenerMode, readonly string[]>> = { localhost: ['127.0.0.1', '::1'], lan: ['0.0.0.0', '::'] };

/** The private-network tunnel (TailscaleCli): serve resolves with the tunnel's base URL. */
export interface TunnelPort {
  serve(target: string): Promise<string>;
  unserve(): Promise<void>;
}

export interface AccessControlDeps {
  listener: ListenerPort;
  bus: EventBus<BrainEvent>;
  clock: Clock;
  logger: Logger;
  settings: AccessSettings;
  settingsFile: string;
  tunnel: TunnelPort;
  interfaces: () => Interfaces;
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.|localhost$)/i;
const modeOfHost = (host: string): ListenerMode => (LOOPBACK.test(host) ? 'localhost' : 'lan');
const OFF: Tunnel = { provider: 'tailscale', state: 'off', url: null, error: null, fix: null };

export class AccessControl {
  private listenerMode: ListenerMode;
  private remote: boolean;
  private tunnel: Tunnel;
  private announced = '';
  private poll: NodeJS.Timeout | undefined;
  private readonly queue = new OneAtATime();
  private firstListen = true;

  constructor(private readonly deps: AccessControlDeps) {
    const pinned = deps.listener.pinnedHost;
    this.listenerMode = pinned === null ? deps.settings.mode : modeOfHost(pinned);
    this.remote = deps.settings.remote;
    this.tunnel = this.remote ? { ...OFF, state: 'starting' } : OFF;
    deps.listener.onListening(() => this.listening());
  }

  /** Before the http part starts: the listener is told where to listen (unless pinned). */
  async start(): Promise<void> {
    if (this.deps.listener.pinnedHost === null) await this.deps.listener.listen(MODE_HOSTS[this.listenerMode]);
    const seconds = this.deps.settings.address_poll_seconds;
    if (seconds > 0) {
      this.poll = setInterval(() => this.refreshAddresses(), seconds * 1000);
      this.poll.unref();
    }
  }

  stop(): void {
    clearInterval(this.poll);
  }

  mode(): AccessMode {
    return this.remote ? 'remote' : this.listenerMode;
  }

  status(): AccessStatus {
    return { mode: this.mode(), listener: this.listenerMode, pinned_host: this.deps.listener.pinnedHost, listening: this.deps.listener.addresses(), urls: this.urls(), tunnel: { ...this.tunnel } };
  }

  /** `svc access lan|localhost`: listen there, keep any tunnel. */
  setListener(mode: ListenerMode): Promise<AccessStatus> {
    return this.serialise(async () => {
      const pinned = this.deps.listener.pinnedHost;
      if (pinned !== null && mode !== this.listenerMode) {
        throw new AppError('CONFLICT', `the listen address is pinned to ${pinned} by server.host, SVC_HOST or --host, so the access mode cannot change it`, {
          pinned_host: pinned,
          fix: `remove server.host from settings.json, unset SVC_HOST and drop --host, restart the brain, then run \`svc access ${mode}\``,
        });
      }
      if (mode === this.listenerMode) return this.status();
      const before = this.listenerMode;
      this.persist(mode, this.remote);
      // Set before the move: the listener announces its new addresses, and the event names this mode.
      this.listenerMode = mode;
      try {
        await this.deps.listener.listen(MODE_HOSTS[mode]);
      } catch (err) {
        this.listenerMode = before;
        this.persist(before, this.remote);
        const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
        throw new AppError('CONFLICT', `cannot listen on ${MODE_HOSTS[mode].join(' and ')}: ${code}; the brain still listens as before (${before})`, {
          hosts: MODE_HOSTS[mode],
          code,
          fix: 'another program may hold the port on these addresses: `ss -ltnp` shows which',
        });
      }
      this.deps.logger.info({ from: before, to: mode }, 'access mode changed');
      return this.status();
    });
  }

  /** `svc access remote-up`: Tailscale Serve to the brain, on top of the current listener mode. */
  remoteUp(): Promise<AccessStatus> {
    return this.serialise(async () => {
      if (this.remote && this.tunnel.state === 'up') return this.status();
      const url = await this.bringUp();
      try {
        this.persist(this.listenerMode, true);
      } catch (err) {
        await this.deps.tunnel.unserve().catch((undo: unknown) => this.deps.logger.error({ err: undo }, 'could not take the tunnel down again'));
        this.tunnel = OFF;
        throw err;
      }
      this.remote = true;
      this.deps.logger.info({ url }, 'remote access on');
      this.announce();
      return this.status();
    });
  }

  /** `svc access remote-down`: the tunnel goes, the listener mode stays (the mode before remote-up). */
  remoteDown(): Promise<AccessStatus> {
    return this.serialise(async () => {
      if (!this.remote) return this.status();
      try {
        await this.deps.tunnel.unserve();
      } catch (err) {
        // Without the CLI or its daemon nothing is being served any more: the mode can still go back.
        if (!(err instanceof TailscaleError)) throw err;
        if (err.failure.reason !== 'cli_missing' && err.failure.reason !== 'daemon_not_running') throw tunnelConflict(err);
        this.deps.logger.warn({ reason: err.failure.reason }, 'tunnel could not be asked to stop; nothing serves it any more');
      }
      this.persist(this.listenerMode, false);
      this.remote = false;
      this.tunnel = OFF;
      // Tailnet callers already connected through the proxy (a phone's WebSocket) are cut off too.
      const closed = this.deps.listener.closeForwarded();
      this.deps.logger.info({ mode: this.listenerMode, closed }, 'remote access off');
      this.announce();
      return this.status();
    });
  }

  /** Serves the brain on the tailnet; a failure is the 409 naming the fix, and the tunnel's error state. */
  private async bringUp(): Promise<string> {
    try {
      const url = await this.deps.tunnel.serve(this.target());
      this.tunnel = { ...OFF, state: 'up', url };
      return url;
    } catch (err) {
      if (!(err instanceof TailscaleError)) throw err;
      this.tunnel = this.remote ? { ...OFF, state: 'error', error: err.failure.message, fix: err.failure.fix } : OFF;
      throw tunnelConflict(err);
    }
  }

  /** Where Tailscale Serve sends the tailnet's requests: loopback, unless the address is pinned elsewhere. */
  private target(): string {
    const bound = this.deps.listener.addresses();
    const port = bound[0]?.port ?? 0;
    if (covered(bound, '127.0.0.1')) return `http://127.0.0.1:${port}`;
    const host = bound[0]?.host ?? '127.0.0.1';
    return host.includes(':') ? `http://[${host}]:${port}` : `http://${host}:${port}`;
  }

  private listening(): void {
    this.announce();
    if (!this.firstListen) return;
    this.firstListen = false;
    // Remote mode kept from the last run: the tunnel comes up in the background, start does not wait on the network.
    if (!this.remote) return;
    const up = (url: string): void => {
      this.deps.logger.info({ url }, 'remote access: tunnel up');
      this.announce();
    };
    void this.serialise(() => this.bringUp().then(up)).catch((err: unknown) => this.deps.logger.warn({ err }, 'remote mode is on but the tunnel did not come up; see svc access status'));
  }

  /** Reads the machine's addresses again (every access.address_poll_seconds) and announces a change. */
  refreshAddresses(): void {
    // On loopback only, the machine's other addresses name no URL: nothing to read.
    if (this.listenerMode === 'localhost') return;
    const urls = JSON.stringify(this.urls());
    if (urls !== this.announced) this.announce();
  }

  private urls(): string[] {
    const tunnel = this.tunnel.state === 'up' && this.tunnel.url ? [this.tunnel.url] : [];
    return [...tunnel, ...baseUrls(this.deps.listener.addresses(), this.deps.interfaces())];
  }

  private announce(): void {
    const urls = this.urls();
    this.announced = JSON.stringify(urls);
    this.deps.bus.emit({ type: 'access_mode', mode: this.mode(), urls, at: this.deps.clock.now() });
  }

  private persist(mode: ListenerMode, remote: boolean): void {
    persistAccess(this.deps.settingsFile, { mode, remote });
  }

  private serialise<T>(work: () => Promise<T>): Promise<T> {
    return this.queue.run(work);
  }
}

const tunnelConflict = (err: TailscaleError): AppError => new AppError('CONFLICT', err.failure.message, { tunnel: 'tailscale', reason: err.failure.reason, fix: err.failure.fix });
