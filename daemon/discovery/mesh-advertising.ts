// When the brain is announced over mDNS, and what with (docs/mesh.md, "When the brain advertises"):
// only while the access mode lets other devices in (not localhost), the listener is bound beyond
// loopback (remote mode through a tunnel to loopback is not on the LAN) and mesh.advertise is on; again
// whenever the port, the machine's addresses or the mode change; goodbye packets at shutdown. Every
// change goes through one queue, so announcements never overlap and the last state wins.
import type { Logger } from 'pino';
import type { BrainAdvertisement } from '../../mesh/mdns-records';
import { mdnsHost } from '../../mesh/mdns-records';
import type { Clock } from '../kernel/capability';
import type { EventBus } from '../kernel/event-bus';
import type { AccessMode, BrainEvent } from '../kernel/events';
import type { ListenAddress } from '../kernel/listener';

/** What does the announcing (mesh/mdns.ts MdnsAdvertiser). */
export interface Advertiser {
  publish(ad: BrainAdvertisement): Promise<void>;
  unpublish(): Promise<void>;
  stop(): Promise<void>;
}

export interface MeshAdvertisingOptions {
  advertiser: Advertiser;
  bus: EventBus<BrainEvent>;
  clock: Clock;
  logger: Logger;
  /** settings mesh.advertise. */
  enabled: boolean;
  /** settings mesh.advertise_sync (SVC_SYNC_DISABLED=1 turns it off). */
  sync: boolean;
  version: string;
  hostname: () => string;
  /** The brain id (mesh/brain-id.ts), read on the first announcement only. */
  brainId: () => string;
  /** The machine's non-loopback addresses, compared to notice a change (os.networkInterfaces()). */
  interfaceAddresses: () => string[];
}

const OWNER = 'mesh';
const isLoopback = (host: string): boolean => host === 'localhost' || host === '::1' || host.startsWith('127.');

/** The mode the listener implies, until the access capability has said (a bind on anything but loopback is beyond it). */
export const modeOf = (addresses: readonly ListenAddress[]): AccessMode => (addresses.some((a) => !isLoopback(a.host)) ? 'lan' : 'localhost');

export class MeshAdvertising {
  private mode: AccessMode = 'localhost';
  /** Set once the access capability has announced a mode: from then on it decides, not the listener. */
  private modeAnnounced = false;
  private port: number | null = null;
  /** Whether the listener is bound beyond loopback: a remote mode served only through a tunnel to loopback is not on the LAN. */
  private beyondLoopback = false;
  private addresses = '';
  private current: string | null = null;
  private brainIdValue: string | undefined;
  private queue: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: MeshAdvertisingOptions) {}

  /** Listens to the bus; `listening` reports the listener's binds (kernel ListenerPort.onListening). */
  start(): void {
    this.options.bus.on(OWNER, (event) => {
      if (event.type !== 'access_mode') return;
      this.modeAnnounced = true;
      this.mode = event.mode;
      this.schedule();
    });
  }

  /** The listener bound `addresses` (at start and after each rebind). */
  listening(addresses: readonly ListenAddress[]): void {
    this.port = addresses[0]?.port ?? null;
    this.beyondLoopback = modeOf(addresses) === 'lan';
    if (!this.modeAnnounced) this.mode = modeOf(addresses);
    this.schedule();
  }

  /** Compares the machine's addresses with the last look; re-announces when they changed. */
  checkAddresses(): void {
    this.schedule();
  }

  /** Resolves when every change scheduled so far has been applied. */
  settled(): Promise<void> {
    return this.queue;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.options.bus.off(OWNER);
    await this.queue;
    const was = this.current;
    this.current = null;
    await this.options.advertiser.stop();
    if (was !== null) this.options.bus.emit({ type: 'mdns_withdrawn', at: this.options.clock.now() });
  }

  private schedule(): void {
    this.queue = this.queue.then(() => this.apply()).catch((err: unknown) => this.options.logger.warn({ err }, 'mDNS announcement failed; the brain is reachable but not discoverable'));
  }

  private desired(): BrainAdvertisement | null {
    const { enabled, sync, version } = this.options;
    if (!enabled || this.stopped || this.port === null || this.port === 0 || this.mode === 'localhost' || !this.beyondLoopback) return null;
    this.brainIdValue ??= this.options.brainId();
    return { brainId: this.brainIdValue, version, port: this.port, tls: false, hostname: this.options.hostname(), sync };
  }

  private async apply(): Promise<void> {
    if (this.stopped) return;
    const ad = this.desired();
    const addresses = ad === null ? '' : this.options.interfaceAddresses().sort().join(' ');
    const key = ad === null ? null : `${JSON.stringify(ad)} ${addresses}`;
    if (key === this.current) return;
    if (ad === null) {
      this.current = null;
      await this.options.advertiser.unpublish();
      this.options.logger.info({ mode: this.mode, enabled: this.options.enabled }, 'mDNS: not advertising');
      this.options.bus.emit({ type: 'mdns_withdrawn', at: this.options.clock.now() });
      return;
    }
    const changed = this.current !== null;
    this.current = key;
    this.addresses = addresses;
    try {
      await this.options.advertiser.publish(ad);
    } catch (err) {
      // Not announced: the next address check (or mode change) tries again.
      this.current = null;
      throw err;
    }
    const host = mdnsHost(ad.hostname);
    this.options.logger.info({ host, port: ad.port, addresses: this.addresses, sync: ad.sync, reannounced: changed }, `mDNS: advertising ${host}:${ad.port}`);
    this.options.bus.emit({ type: 'mdns_advertised', host, port: ad.port, at: this.options.clock.now() });
  }
}
