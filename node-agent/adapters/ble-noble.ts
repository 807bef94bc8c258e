// BLE off Linux through @abandonware/noble. It is optional (not a dependency of svc: it compiles
// natively and throws on load where the kernel has no Bluetooth; ARCHITECTURE.md), so it is imported
// only when a BLE device is configured on such a machine, and a failed import is status 'unavailable'
// for good. noble is one process-wide instance; a session holds its listeners for one attempt and
// removes them on close. On macOS noble gives no addresses (peripherals are known by an id), so match
// by local_name there.
import type { EventEmitter } from 'node:events';
import type { AdapterLog } from './adapter';
import { BleNotFound, BleUnavailable, describeTarget, matchesTarget, type BleCharacteristic, type BlePeripheral, type BleSession, type BleTarget, type OpenBleSession } from './ble-transport';

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

class NobleDevice implements BlePeripheral {
  readonly address: string;
  private readonly found = new Map<string, NobleCharacteristic>();
  constructor(
    private readonly p: NoblePeripheral,
    readonly name: string | null,
  ) {
    this.address = p.address || p.id;
  }

  async connect(): Promise<void> {
    await this.p.connectAsync();
    const { characteristics } = await this.p.discoverSomeServicesAndCharacteristicsAsync([], []);
    for (const c of characteristics) this.found.set(`${c._serviceUuid ?? ''}/${c.uuid}`, c);
  }

  async characteristic(service: string, uuid: string): Promise<BleCharacteristic> {
    const c = this.found.get(`${nobleUuid(service)}/${nobleUuid(uuid)}`);
    if (!c) throw new Error(`${this.address} has no characteristic ${uuid} in service ${service}`);
    return {
      flags: c.properties.map((p) => (p === 'writeWithoutResponse' ? 'write-without-response' : p)),
      read: () => c.readAsync(),
      write: (value, mode) => c.writeAsync(value, mode === 'command'),
      subscribe: async (onValue) => {
        c.on('data', (data: Buffer) => onValue(data));
        await c.subscribeAsync();
      },
    };
  }

  onDisconnect(listener: () => void): void {
    this.p.once('disconnect', () => listener());
  }

  async disconnect(): Promise<void> {
    await this.p.disconnectAsync();
  }
}
