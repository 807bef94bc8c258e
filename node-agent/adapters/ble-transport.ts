// The port between the BLE adapter (ble.ts: when to scan, connect, read, retry) and a Bluetooth
// stack (ble-bluez.ts: BlueZ over D-Bus through node-ble on Linux; ble-noble.ts: @abandonware/noble
// elsewhere). One session is one connection to the stack (a D-Bus connection, a noble instance) and
// serves one connection to one peripheral; the adapter opens a fresh session for every attempt, so
// a dead stack or a stale proxy never outlives the attempt that saw it.

/** Which peripheral to look for: by address, by its advertised name, or both. */
export interface BleTarget {
  /** "AA:BB:CC:DD:EE:FF"; compared case-insensitively. */
  address?: string;
  /** The advertised (local) name, exactly. */
  localName?: string;
}

/** How a write goes over the air: with a response (ATT write request) or without (write command). */
export type BleWriteMode = 'request' | 'command';

export interface BleCharacteristic {
  /** GATT properties as BlueZ names them: read, write, write-without-response, notify, indicate, … */
  readonly flags: readonly string[];
  read(): Promise<Buffer>;
  write(value: Buffer, mode: BleWriteMode): Promise<void>;
  /** Turns notifications on; every notified value goes to onValue until the connection ends. */
  subscribe(onValue: (value: Buffer) => void): Promise<void>;
}

export interface BlePeripheral {
  readonly address: string;
  readonly name: string | null;
  /** Connects and resolves the GATT services. */
  connect(): Promise<void>;
  /** Characteristic `uuid` of service `service` (UUIDs compared case-insensitively); rejects when the device lacks it. */
  characteristic(service: string, uuid: string): Promise<BleCharacteristic>;
  /** Registers the callback for the link dropping (the peripheral went away or disconnected); called at most once. */
  onDisconnect(listener: () => void): void;
  disconnect(): Promise<void>;
}

export interface BleSession {
  /** Scans until the target shows up (resolves with it) or `timeoutMs` passes (rejects with BleNotFound). */
  find(target: BleTarget, timeoutMs: number, signal: AbortSignal): Promise<BlePeripheral>;
  /** Registers the callback for the stack going away under the session (D-Bus closed, bluetoothd stopped); called at most once. */
  onLost(listener: (reason: BleUnavailable) => void): void;
  /** Ends the session (and its D-Bus connection). Idempotent, never rejects. */
  close(): Promise<void>;
}

/** Opens a session; rejects with BleUnavailable when the machine has no usable Bluetooth stack. */
export type OpenBleSession = () => Promise<BleSession>;

/** The machine's Bluetooth stack is not usable (no D-Bus, no BlueZ, no adapter, no noble): status 'unavailable'. */
export class BleUnavailable extends Error {
  /** `permanent`: retrying cannot help (the library is not installed); else the stack may come back (bluetoothd restarts). */
  constructor(
    message: string,
    readonly permanent = false,
  ) {
    super(message);
    this.name = 'BleUnavailable';
  }
}

/** The peripheral did not show up within the scan timeout. */
export class BleNotFound extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BleNotFound';
  }
}

/** How a target reads in a status line: `AA:BB:..`, `"Thermo"` or `AA:BB:.. named "Thermo"`. */
export const describeTarget = (t: BleTarget): string =>
  [t.address, t.localName === undefined ? undefined : `"${t.localName}"`].filter((s) => s !== undefined).join(' named ') || 'any device';

/** Whether an advertised device matches the target. */
export function matchesTarget(t: BleTarget, address: string, name: string | null): boolean {
  if (t.address !== undefined && t.address.toUpperCase() !== address.toUpperCase()) return false;
  if (t.localName !== undefined && name !== t.localName) return false;
  return true;
}

/**
 * `work`, unless `end` (the session or link ending) or `signal` aborts, or `ms` pass first: a stack
 * may never answer a call whose connection died, so every call is raced against these.
 */
export function guarded<T>(work: Promise<T>, what: string, ms: number, end: AbortSignal, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const signals = signal ? [end, signal] : [end];
    const stop = (): void => {
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      stop();
      reject((signals.find((s) => s.aborted)?.reason as Error | undefined) ?? new Error(`${what}: aborted`));
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`${what}: no answer within ${ms} ms`));
    }, ms);
    for (const s of signals) {
      if (s.aborted) return onAbort();
      s.addEventListener('abort', onAbort, { once: true });
    }
    work.then(
      (v) => {
        stop();
        resolve(v);
      },
      (err: unknown) => {
        stop();
        reject(err instanceof Error ? err : new Error(`${what}: ${String(err)}`));
      },
    );
  });
}
