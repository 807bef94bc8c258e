// BLE off Linux through @abandonware/noble. It is optional (not a dependency of svc: it compiles
// natively and throws on load where the kernel has no Bluetooth; ARCHITECTURE.md), so it is imported
// only when a BLE device is configured on such a machine, and a failed import is status 'unavailable'
// for good. noble is one process-wide instance; a session holds its listeners for one attempt and
// removes them on close. On macOS noble gives no addresses (peripherals are known by an id), so match
// by local_name there.
import type { EventEmitter } from 'node:events';
import type { AdapterLog } from './adapter';
import { BleNotFound, BleUnavailable, describeTarget, guarded, matchesTarget, type BleCharacteristic, type BlePeripheral, type BleSession, type BleTarget, type OpenBleSession } from './ble-transport';

/** The part of noble's API used here (its own typings are not installed with svc). */
interface Noble extends EventEmitter {
  readonly state: string;
  startScanningAsync(serviceUuids?: string[], allowDuplicates?: boolean): Promise<void>;
  stopScanningAsync(): Promise<void>;
}
interface NobleCharacteristic extends EventEmitter {
  readonly uuid: string;
  readonly properties: string[];
  readAsync(): Promise<Buffer>;
  writeAsync(data: Buffer, withoutResponse: boolean): Promise<void>;
  subscribeAsync(): Promise<void>;
}
interface NoblePeripheral extends EventEmitter {
  readonly id: string;
  readonly address: string;
  readonly advertisement: { localName?: string };
  connectAsync(): Promise<void>;
  disconnectAsync(): Promise<void>;
  discoverSomeServicesAndCharacteristicsAsync(services: string[], characteristics: string[]): Promise<{ services: Array<{ uuid: string }>; characteristics: Array<NobleCharacteristic & { _serviceUuid?: string }> }>;
}

export const NOBLE_MISSING = 'BLE needs BlueZ on Linux or @abandonware/noble';
const NOBLE = '@abandonware/noble';

/** noble's form of a UUID: no dashes, lower case, the 16-bit form for the Bluetooth base UUID. */
export function nobleUuid(bleUuid: string): string {
  const m = /^0000([0-9a-f]{4})-0000-1000-8000-00805f9b34fb$/.exec(bleUuid);
  return m ? m[1]! : bleUuid.replace(/-/g, '');
}

/** Loads noble (once); a missing or failing module is BleUnavailable for good. */
async function loadNoble(log: AdapterLog, importer: (name: string) => Promise<unknown>): Promise<Noble> {
  let mod: unknown;
  try {
    mod = await importer(NOBLE);
  } catch (err) {
    // Not installed, or its native binding throws on load (no Bluetooth in the kernel): either way no BLE here.
    log.info({ err: err instanceof Error ? err.message : String(err) }, 'ble: @abandonware/noble did not load');
    throw new BleUnavailable(NOBLE_MISSING, true);
  }
  const noble = (mod as { default?: Noble }).default ?? (mod as Noble);
  if (typeof noble.startScanningAsync !== 'function') throw new BleUnavailable(`${NOBLE_MISSING} (the installed ${NOBLE} has no startScanningAsync)`, true);
  return noble;
}

export interface NobleOptions {
  log: AdapterLog;
  /** How long to wait for the radio to report poweredOn (ms). */
  powerOnTimeoutMs?: number;
  /** import() by default; tests pass their own. */
  importer?: (name: string) => Promise<unknown>;
}

export function nobleSessions(options: NobleOptions): OpenBleSession {
  const importer = options.importer ?? ((name: string) => import(name) as Promise<unknown>);
  let noble: Promise<Noble> | null = null;
  return async () => {
    noble ??= loadNoble(options.log, importer);
    const n = await noble;
    await poweredOn(n, options.powerOnTimeoutMs ?? 5000);
    return new NobleSession(n);
  };
}

function poweredOn(noble: Noble, timeoutMs: number): Promise<void> {
  if (noble.state === 'poweredOn') return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onState = (state: string): void => {
      if (state !== 'poweredOn') return;
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      noble.off('stateChange', onState);
      reject(new BleUnavailable(`Bluetooth is ${noble.state} (noble)`));
    }, timeoutMs);
    noble.on('stateChange', onState);
  });
}

class NobleSession implements BleSession {
  private readonly lostListeners: Array<(reason: BleUnavailable) => void> = [];
  private readonly onState = (state: string): void => {
    if (state === 'poweredOn') return;
    for (const l of this.lostListeners.splice(0)) l(new BleUnavailable(`Bluetooth is ${state} (noble)`));
  };
  constructor(private readonly noble: Noble) {
    noble.on('stateChange', this.onState);
  }

  find(target: BleTarget, timeoutMs: number, signal: AbortSignal): Promise<BlePeripheral> {
    return new Promise<BlePeripheral>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.noble.off('discover', onDiscover);
        signal.removeEventListener('abort', onAbort);
        this.noble.stopScanningAsync().catch((err: unknown) => reject(err instanceof Error ? err : new Error(String(err))));
      };
      const onDiscover = (p: NoblePeripheral): void => {
        const name = p.advertisement.localName ?? null;
        if (!matchesTarget(target, p.address || p.id, name)) return;
        finish();
        resolve(new NobleDevice(p, name));
      };
      const onAbort = (): void => {
        finish();
        reject(signal.reason as Error);
      };
      const timer = setTimeout(() => {
        finish();
        reject(new BleNotFound(`${describeTarget(target)} not found in ${timeoutMs / 1000} s of scanning`));
      }, timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.noble.on('discover', onDiscover);
      this.noble.startScanningAsync([], false).catch((err: unknown) => {
        finish();
        reject(err instanceof Error ? err : new Error(String(err)));
      });
    });
  }

  onLost(listener: (reason: BleUnavailable) => void): void {
    this.lostListeners.push(listener);
  }

  async close(): Promise<void> {
    this.noble.off('stateChange', this.onState);
    this.lostListeners.length = 0;
  }
}

/** Bounds on noble's calls (ms): it does not always fail a call whose link went away. */
const CALL_TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 30_000;

class NobleDevice implements BlePeripheral {
  readonly address: string;
  private readonly found = new Map<string, NobleCharacteristic>();
  /** Aborted (with a BleUnavailable) when the link drops: every call in flight fails with it. */
  private readonly gone = new AbortController();
  constructor(
    private readonly p: NoblePeripheral,
    readonly name: string | null,
  ) {
    this.address = p.address || p.id;
    p.once('disconnect', () => this.gone.abort(new BleUnavailable(`${this.address} disconnected`)));
  }

  private call<T>(work: Promise<T>, what: string, ms = CALL_TIMEOUT_MS): Promise<T> {
    return guarded(work, what, ms, this.gone.signal);
  }

  async connect(): Promise<void> {
    await this.call(this.p.connectAsync(), `connect ${this.address}`, CONNECT_TIMEOUT_MS);
    const { characteristics } = await this.call(this.p.discoverSomeServicesAndCharacteristicsAsync([], []), `discover ${this.address}`, CONNECT_TIMEOUT_MS);
    for (const c of characteristics) this.found.set(`${c._serviceUuid ?? ''}/${c.uuid}`, c);
  }

  async characteristic(service: string, uuid: string): Promise<BleCharacteristic> {
    const c = this.found.get(`${nobleUuid(service)}/${nobleUuid(uuid)}`);
    if (!c) throw new Error(`${this.address} has no characteristic ${uuid} in service ${service}`);
    return {
      flags: c.properties.map((p) => (p === 'writeWithoutResponse' ? 'write-without-response' : p)),
      read: () => this.call(c.readAsync(), `read ${uuid}`),
      write: (value, mode) => this.call(c.writeAsync(value, mode === 'command'), `write ${uuid}`),
      subscribe: async (onValue) => {
        c.on('data', (data: Buffer) => onValue(data));
        await this.call(c.subscribeAsync(), `notify ${uuid}`);
      },
    };
  }

  onDisconnect(listener: () => void): void {
    if (this.gone.signal.aborted) listener();
    else this.gone.signal.addEventListener('abort', () => listener(), { once: true });
  }

  async disconnect(): Promise<void> {
    if (this.gone.signal.aborted) return;
    await this.call(this.p.disconnectAsync(), `disconnect ${this.address}`);
  }
}
