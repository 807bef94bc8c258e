// mDNS advertise and browse over bonjour-service (pure JS; ARCHITECTURE.md says why not `mdns`).
// The package is imported on first use only (esbuild puts it in a chunk of its own), so a brain that
// never advertises — localhost mode — never loads it. One instance owns one multicast socket (UDP
// 5353 on every IPv4 interface, shared with avahi-daemon through SO_REUSEADDR).
import type { EventEmitter } from 'node:events';
import type { Bonjour as BonjourInstance, Browser, Service } from 'bonjour-service';
import { brainServices, readService, SERVICE_TYPES, type BrainAdvertisement, type DiscoveredService, type RawService, type ServiceKind } from './mdns-records';

/**
 * The part of the bonjour-service module used here. It is CommonJS whose module.exports is the class
 * itself (its `Bonjour` property is lost when the class replaces module.exports), so the class is the
 * default export, in Node and in esbuild's bundle alike.
 */
export interface BonjourModule {
  default: typeof BonjourInstance;
}

/** The logging the mDNS code needs (a pino logger fits). */
export interface MdnsLog {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface MdnsOptions {
  log: MdnsLog;
  /** How bonjour-service is loaded (tests may count loads). */
  load?: () => Promise<BonjourModule>;
}

export class MdnsError extends Error {}

const loadBonjour = (): Promise<BonjourModule> => import('bonjour-service');

/** How long publish() waits for every service's first announcement (probing takes ~0.25-1 s, RFC 6762 §8.1). */
const ANNOUNCE_WAIT_MS = 5000;

/**
 * A Bonjour instance with an error listener on its socket. bonjour-service keeps its multicast-dns
 * emitter private and attaches no 'error' listener: an EADDRINUSE or EACCES on port 5353 would be an
 * unhandled 'error' event and end the process. The field is checked, so a release that renames it
 * fails here, loudly, instead of crashing later.
 */
async function openBonjour(options: MdnsOptions): Promise<BonjourInstance> {
  const { default: Bonjour } = await (options.load ?? loadBonjour)();
  const instance = new Bonjour({}, (err: Error) => options.log.warn({ err }, 'mDNS send failed'));
  const socket = (instance as unknown as { server?: { mdns?: EventEmitter } }).server?.mdns;
  if (socket === undefined || typeof socket.on !== 'function') {
    instance.destroy();
    throw new MdnsError('bonjour-service has no server.mdns emitter: the installed version is not one this code knows');
  }
  socket.on('error', (err: Error) => options.log.warn({ err }, 'mDNS socket error (is UDP port 5353 usable?)'));
  socket.on('warning', (err: Error) => options.log.debug({ err }, 'mDNS warning'));
  return instance;
}

const destroy = (instance: BonjourInstance): Promise<void> => new Promise((resolve) => instance.destroy(() => resolve()));

/**
 * Publishes a brain's services and keeps them until unpublished. publish() again replaces them (a
 * changed port, address or TXT: goodbye packets for the old records, then the new ones are
 * announced), which is how the brain re-announces after an address change.
 */
export class MdnsAdvertiser {
  private instance: BonjourInstance | undefined;
  private published: Service[] = [];
  /** Names already probed and owned by this brain: a re-announcement does not probe them again. */
  private owned = new Set<string>();

  constructor(private readonly options: MdnsOptions) {}

  get active(): boolean {
    return this.published.length > 0;
  }

  /** Announces `ad`'s services; resolves once each has been announced (after probing its name). */
  async publish(ad: BrainAdvertisement): Promise<void> {
    await this.unpublish();
    this.instance ??= await openBonjour(this.options);
    const instance = this.instance;
    const services = brainServices(ad).map((record) => {
      const fqdn = `${record.name}._${record.type}._tcp`;
      const service = instance.publish({ name: record.name, type: record.type, host: record.host, port: record.port, txt: record.txt, probe: !this.owned.has(fqdn) });
      return { service, fqdn };
    });
    this.published = services.map((s) => s.service);
    await Promise.all(services.map(({ service, fqdn }) => this.announced(service).then(() => this.owned.add(fqdn))));
  }

  private announced(service: Service): Promise<void> {
    if (service.published) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        service.removeListener('up', up);
        reject(new MdnsError(`${service.fqdn} was not announced within ${ANNOUNCE_WAIT_MS} ms (its name is in use on the network, or multicast cannot be sent)`));
      }, ANNOUNCE_WAIT_MS);
      timer.unref();
      const up = (): void => {
        clearTimeout(timer);
        resolve();
      };
      service.once('up', up);
    });
  }

  /** Sends goodbye packets (TTL 0) for everything published; the socket stays open. */
  async unpublish(): Promise<void> {
    const instance = this.instance;
    if (instance === undefined || this.published.length === 0) return;
    this.published = [];
    await new Promise<void>((resolve) => instance.unpublishAll(() => resolve()));
  }

  /** Unpublishes and closes the socket (shutdown: peers forget the brain at once, RFC 6762 §10.1). */
  async stop(): Promise<void> {
    await this.unpublish();
    const instance = this.instance;
    this.instance = undefined;
    if (instance !== undefined) await destroy(instance);
  }
}

export interface BrowseOptions extends MdnsOptions {
  kinds: readonly ServiceKind[];
  onUp(service: DiscoveredService): void;
  onDown?(service: { kind: ServiceKind; name: string }): void;
  /** First re-query interval; doubles up to an hour (RFC 6762 §5.2). Default 1000 ms. */
  requeryMs?: number;
}

export interface MdnsBrowse {
  /** What is up now, per kind and instance name. */
  services(): DiscoveredService[];
  stop(): Promise<void>;
}

const REQUERY_MAX_MS = 60 * 60 * 1000;

/**
 * Browses the given service kinds until stopped: node-agents find the brain, brains find their peers.
 * Services whose records do not check out (mesh/mdns-records.ts readService) are logged and skipped.
 */
export async function browseMdns(options: BrowseOptions): Promise<MdnsBrowse> {
  const instance = await openBonjour(options);
  const found = new Map<string, DiscoveredService>();
  const browsers: Browser[] = [];
  for (const kind of options.kinds) {
    const browser = instance.find({ type: SERVICE_TYPES[kind] });
    const seen = (raw: RawService): void => {
      const read = readService(raw);
      if ('ignored' in read) {
        options.log.debug({ name: raw.name, type: raw.type, reason: read.ignored }, 'mDNS service ignored');
        return;
      }
      found.set(`${kind}/${read.service.name}`, read.service);
      options.onUp(read.service);
    };
    browser.on('up', seen);
    browser.on('srv-update', seen);
    browser.on('txt-update', seen);
    browser.on('down', (raw: Service) => {
      if (found.delete(`${kind}/${raw.name}`)) options.onDown?.({ kind, name: raw.name });
    });
    browsers.push(browser);
  }
  // A query can be lost; ask again, less and less often, as RFC 6762 §5.2 continuous querying does.
  let delay = options.requeryMs ?? 1000;
  let timer: NodeJS.Timeout | undefined;
  const requery = (): void => {
    for (const browser of browsers) browser.update();
    delay = Math.min(delay * 2, REQUERY_MAX_MS);
    timer = setTimeout(requery, delay);
    timer.unref();
  };
  timer = setTimeout(requery, delay);
  timer.unref();
  return {
    services: () => [...found.values()],
    stop: async () => {
      clearTimeout(timer);
      for (const browser of browsers) browser.stop();
      await destroy(instance);
    },
  };
}

/**
 * The first service of `kind` that `accept` takes (a brain id to match, say), or null when none shows
 * within `timeoutMs`: how a node-agent finds its brain.
 */
export async function discover(options: MdnsOptions & { kind: ServiceKind; timeoutMs: number; accept?: (service: DiscoveredService) => boolean }): Promise<DiscoveredService | null> {
  let settle: (service: DiscoveredService | null) => void = () => undefined;
  const result = new Promise<DiscoveredService | null>((resolve) => (settle = resolve));
  const browse = await browseMdns({ ...options, kinds: [options.kind], onUp: (service) => (options.accept?.(service) ?? true) && settle(service) });
  const timer = setTimeout(() => settle(null), options.timeoutMs);
  try {
    return await result;
  } finally {
    clearTimeout(timer);
    await browse.stop();
  }
}
