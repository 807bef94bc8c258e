// A BLE peripheral as a node-agent device (docs/node-agent.md "BLE devices"). The adapter supervises
// one connection at a time through a Bluetooth stack behind OpenBleSession (ble-transport.ts):
//   scan for the peripheral (address and/or local name) → connect → resolve the characteristics the
//   config maps → subscribe to the readings' notifications and read each once → 'connected'.
// A dropped link (BlueZ: Device1.Connected=false), a stack that goes away (D-Bus closed, bluetoothd
// stopped) or a failed step ends the attempt; the next one starts after a backoff (1 s doubling to
// 30 s, jitter), with status 'connecting' (or 'unavailable' while the stack itself is missing, e.g. no
// D-Bus). Meanwhile actions fail at once with "device unavailable". Readings become device_events
// `{<field>: value}` of the characteristic's event type; a read action answers `{<field>: value}`, a
// write action writes its param encoded by the characteristic's format and answers what it wrote.
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeviceManifest } from '../../protocol/node';
import type { BleDevice } from '../config';
import { AdapterError, DEVICE_UNAVAILABLE, type AdapterLog, type AdapterSink, type AdapterState, type AdapterStatus, type DeviceAdapter } from './adapter';
import { BleDecodeError, BleEncodeError, decodeValue, encodeValue } from './ble-codec';
import { blePlan, type BlePlan, type BleReadingPlan } from './ble-config';
import { bluezSessions } from './ble-bluez';
import { nobleSessions } from './ble-noble';
import { BleUnavailable, describeTarget, type BleCharacteristic, type BlePeripheral, type BleSession, type OpenBleSession } from './ble-transport';
import { deviceManifest } from './serial';

/** The stack for this machine: BlueZ over D-Bus on Linux (adapter `hci`, default the first), noble elsewhere. */
export function bleSessionsFor(platform: NodeJS.Platform, options: { log: AdapterLog; hci?: string | undefined; busAddress?: string | undefined }): OpenBleSession {
  if (platform !== 'linux') return nobleSessions({ log: options.log });
  return bluezSessions({ log: options.log, ...(options.hci !== undefined ? { adapterName: options.hci } : {}), ...(options.busAddress !== undefined ? { busAddress: options.busAddress } : {}) });
}

export interface BleAdapterDeps {
  /** The Bluetooth stack: bluezSessions (Linux) or nobleSessions (elsewhere); see bleSessionsFor. */
  open: OpenBleSession;
  log: AdapterLog;
  /** How long one scan looks for the peripheral (ms). */
  scanTimeoutMs?: number;
  /** Reconnect backoff bounds (ms). */
  retryMinMs?: number;
  retryMaxMs?: number;
  random?: () => number;
}

/** The live connection: what run() uses. */
interface Link {
  readonly peripheral: BlePeripheral;
  readonly characteristics: ReadonlyMap<string, BleCharacteristic>;
}

/** How an attempt ended: whether it got connected, and why it ended. */
interface Outcome {
  readonly connected: boolean;
  readonly error: unknown;
  /** The error came from opening the stack (no D-Bus, no BlueZ, no adapter): status 'unavailable'. */
  readonly stackMissing: boolean;
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class BleAdapter implements DeviceAdapter {
  readonly manifest: DeviceManifest;
  private readonly plan: BlePlan;
  private readonly o: Required<Omit<BleAdapterDeps, 'open' | 'log'>>;
  private sink: AdapterSink | null = null;
  private link: Link | null = null;
  private state: AdapterStatus = { state: 'connecting', detail: 'not started' };
  private readonly stopping = new AbortController();
  private supervisor: Promise<void> | null = null;

  constructor(
    device: BleDevice,
    private readonly deps: BleAdapterDeps,
  ) {
    this.plan = blePlan(device);
    this.manifest = deviceManifest(device, { kind: 'ble', ...(device.address !== undefined ? { address: device.address } : {}), ...(device.local_name !== undefined ? { local_name: device.local_name } : {}) });
    this.o = { scanTimeoutMs: deps.scanTimeoutMs ?? 30_000, retryMinMs: deps.retryMinMs ?? 1000, retryMaxMs: deps.retryMaxMs ?? 30_000, random: deps.random ?? Math.random };
  }

  async start(sink: AdapterSink): Promise<void> {
    if (this.sink) throw new Error(`ble device ${this.manifest.device_id} started twice`);
    this.sink = sink;
    this.supervisor = this.supervise();
  }

  status(): AdapterStatus {
    return { ...this.state };
  }

  async stop(): Promise<void> {
    this.stopping.abort(new AdapterError('the node-agent is stopping'));
    await this.supervisor;
    this.setStatus('unavailable', 'stopped');
  }

  async run(action: string, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
    const read = this.plan.reads.get(action);
    const write = this.plan.writes.get(action);
    if (!read && !write) throw new AdapterError(`${this.manifest.device_id} has no action ${action}`);
    const link = this.link;
    if (!link) throw new AdapterError(DEVICE_UNAVAILABLE);
    if (read) {
      const bytes = await this.transfer(link.characteristics.get(read.key)!.read(), action, signal);
      try {
        return { [read.field]: decodeValue(read.format, bytes, read.scale) };
      } catch (err) {
        if (err instanceof BleDecodeError) throw new AdapterError(`${action}: the device answered ${bytes.toString('hex') || 'nothing'}, ${err.message}`);
        throw err;
      }
    }
    const w = write!;
    const value = params[w.param] ?? w.fallback;
    if (value === undefined) throw new AdapterError(`${action}: missing parameter ${w.param}`);
    let bytes: Buffer;
    try {
      bytes = encodeValue(w.format, value, w.scale);
    } catch (err) {
      if (err instanceof BleEncodeError) throw new AdapterError(`${action}: ${w.param} ${err.message}`);
      throw err;
    }
    await this.transfer(link.characteristics.get(w.key)!.write(bytes, w.mode), action, signal);
    return { [w.param]: value, written: bytes.toString('hex') };
  }

  /** A GATT read or write on behalf of run(): its failures (and an abort, and stop()) become AdapterErrors. */
  private async transfer<T>(work: Promise<T>, action: string, signal: AbortSignal): Promise<T> {
    const signals = [signal, this.stopping.signal];
    let onAbort = (): void => undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new AdapterError(`${action}: ${signal.aborted ? 'aborted' : 'the node-agent is stopping'}`));
    });
    for (const s of signals) s.addEventListener('abort', onAbort, { once: true });
    if (signals.some((s) => s.aborted)) onAbort();
    try {
      return await Promise.race([work, aborted]);
    } catch (err) {
      if (err instanceof AdapterError) throw err;
      if (err instanceof BleUnavailable) throw new AdapterError(`${action}: ${DEVICE_UNAVAILABLE} (${err.message})`);
      if (err instanceof Error) throw new AdapterError(`${action}: ${err.message}`);
      throw err;
    } finally {
      for (const s of signals) s.removeEventListener('abort', onAbort);
    }
  }

  private setStatus(state: AdapterState, detail: string): void {
    if (this.state.state === state && this.state.detail === detail) return;
    const changed = this.state.state !== state;
    this.state = { state, detail };
    this.deps.log[changed ? 'info' : 'debug']({ device: this.manifest.device_id, state, detail }, 'ble: status');
    this.sink?.status(state, detail);
  }

  /** Attempts until stop(): each one a fresh session; the backoff restarts after a connection that held. */
  private async supervise(): Promise<void> {
    let failures = 0;
    while (!this.stopping.signal.aborted) {
      const outcome = await this.attempt();
      if (this.stopping.signal.aborted) break;
      if (outcome.connected) failures = 0;
      if (outcome.error instanceof BleUnavailable && outcome.error.permanent) {
        this.setStatus('unavailable', outcome.error.message);
        return;
      }
      const delay = this.backoff(failures++);
      const why = outcome.error === null ? 'disconnected' : messageOf(outcome.error);
      this.setStatus(outcome.stackMissing ? 'unavailable' : 'connecting', `${why}; retrying in ${(delay / 1000).toFixed(1)} s`);
      try {
        await sleep(delay, undefined, { signal: this.stopping.signal });
      } catch (err) {
        if (!this.stopping.signal.aborted) throw err;
      }
    }
  }

  private backoff(failures: number): number {
    const base = Math.min(this.o.retryMaxMs, this.o.retryMinMs * 2 ** Math.min(failures, 30));
    return Math.round(base * (0.8 + 0.4 * this.o.random()));
  }

  /** One session: open, find, connect, set up, then wait for the link or the stack to go (or stop()). */
  private async attempt(): Promise<Outcome> {
    let session: BleSession;
    try {
      session = await this.unlessStopping(this.deps.open(), (late) => void late.close());
    } catch (err) {
      return { connected: false, error: err, stackMissing: err instanceof BleUnavailable };
    }
    let connected = false;
    // Until connected, stop() ends the session itself: whatever BlueZ call is pending then fails at once.
    const closeOnStop = (): void => void session.close();
    this.stopping.signal.addEventListener('abort', closeOnStop, { once: true });
    try {
      const lost = new Promise<BleUnavailable>((resolve) => session.onLost(resolve));
      this.setStatus('connecting', `scanning for ${describeTarget(this.plan.target)}`);
      const peripheral = await session.find(this.plan.target, this.o.scanTimeoutMs, this.stopping.signal);
      this.setStatus('connecting', `connecting to ${peripheral.address}`);
      const dropped = new Promise<void>((resolve) => peripheral.onDisconnect(resolve));
      await peripheral.connect();
      this.link = { peripheral, characteristics: await this.setUp(peripheral) };
      this.stopping.signal.removeEventListener('abort', closeOnStop);
      connected = true;
      this.setStatus('connected', `connected to ${peripheral.address}${peripheral.name === null ? '' : ` (${peripheral.name})`}`);
      const stopped = new Promise<void>((resolve) => {
        if (this.stopping.signal.aborted) resolve();
        else this.stopping.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      const end = await Promise.race([dropped.then(() => null), lost, stopped.then(() => null)]);
      this.link = null;
      if (this.stopping.signal.aborted) await peripheral.disconnect();
      return { connected, error: end, stackMissing: false };
    } catch (err) {
      if (this.stopping.signal.aborted) return { connected, error: null, stackMissing: false };
      this.deps.log.debug({ device: this.manifest.device_id, err: messageOf(err) }, 'ble: attempt failed');
      return { connected, error: err, stackMissing: false };
    } finally {
      this.stopping.signal.removeEventListener('abort', closeOnStop);
      this.link = null;
      await session.close();
    }
  }

  /** Resolves every mapped characteristic, subscribes the readings and reads each once. */
  private async setUp(peripheral: BlePeripheral): Promise<Map<string, BleCharacteristic>> {
    const resolved = new Map<string, BleCharacteristic>();
    for (const ref of this.plan.characteristics) resolved.set(ref.key, await peripheral.characteristic(ref.service, ref.characteristic));
    for (const r of this.plan.readings) {
      const c = resolved.get(r.key)!;
      if (c.flags.includes('notify') || c.flags.includes('indicate')) await c.subscribe((value) => this.report(r, value));
      else this.deps.log.warn({ device: this.manifest.device_id, characteristic: r.characteristic }, 'ble: a reading\'s characteristic does not notify; it is read once per connection');
      if (c.flags.includes('read')) this.report(r, await c.read());
    }
    return resolved;
  }

  private report(r: BleReadingPlan, bytes: Buffer): void {
    let value: unknown;
    try {
      value = decodeValue(r.format, bytes, r.scale);
    } catch (err) {
      if (!(err instanceof BleDecodeError)) throw err;
      this.deps.log.warn({ device: this.manifest.device_id, characteristic: r.characteristic, bytes: bytes.toString('hex'), err: err.message }, 'ble: reading dropped');
      return;
    }
    this.sink?.reading(r.eventType, { [r.field]: value });
  }

  /** `work`, unless stop() comes first: then it rejects, and what `work` yields later goes to `late`. */
  private unlessStopping<T>(work: Promise<T>, late: (value: T) => void): Promise<T> {
    const signal = this.stopping.signal;
    if (signal.aborted) {
      work.then(late, () => undefined);
      return Promise.reject(signal.reason as Error);
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        work.then(late, () => undefined);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(
        (v) => {
          signal.removeEventListener('abort', onAbort);
          if (signal.aborted) late(v);
          else resolve(v);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }
}
