// Device readings (spec 2.15; docs/hardware.md "Telemetry"): every scalar of a device_event's `data` is
// a reading named by its path (`celsius`, nested `{accel: {x}}` → `accel.x`; arrays and other
// non-scalars are skipped), with its last value and time, and a bounded, downsampled history.
//
// Durability: last values are durable — the devices whose readings changed are written once a second
// (flush), all in one transaction, so the hot path (50 nodes × 10 Hz) runs no SQL per event. The
// history is RAM only: it serves the dashboard and alerts of the running brain, and writing hundreds
// of points a second to an SD card would cost more than losing a day's curve on restart is worth.
//
// History scheme: numeric readings only (booleans count as 1/0; strings keep just their last value).
// Each point is {t, v, n}: time, mean value and how many raw samples it stands for. Points older than
// history_window_s are dropped. When a reading holds more than history_points points, the older half
// is merged pairwise (time and value averaged, weighted by n) — so recent points keep full resolution
// and each older stretch halves its resolution each time it is merged again. A merge removes at least
// one point per pair, so the length never exceeds history_points (property-tested), and the work is
// amortised O(1) per sample.
import type { Logger } from 'pino';
import type { CapabilityContext } from '../../kernel/capability';

type Store = CapabilityContext['store'];

export type Scalar = string | number | boolean | null;
export interface HistoryPoint {
  /** Epoch ms (the weighted mean of the merged samples' times). */
  t: number;
  v: number;
  /** Raw samples this point stands for. */
  n: number;
}
export interface LastReading {
  value: Scalar;
  at: number;
}

/** At most this many readings per device (a node cannot grow the brain's memory without bound). */
export const MAX_READINGS_PER_DEVICE = 128;
const MAX_NAME = 128;
const MAX_DEPTH = 4;

/** The scalars of an event's data, nested objects flattened with dots; non-scalars (arrays…) ignored. */
export function flatten(data: Record<string, unknown>, prefix = '', out: Record<string, Scalar> = {}, depth = 0): Record<string, Scalar> {
  for (const [key, value] of Object.entries(data)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (name.length > MAX_NAME) continue;
    if (value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) out[name] = value;
    else if (typeof value === 'object' && !Array.isArray(value) && depth < MAX_DEPTH) flatten(value as Record<string, unknown>, name, out, depth + 1);
  }
  return out;
}

/** A bounded, downsampled series of one numeric reading (scheme above). */
export class ReadingHistory {
  readonly points: HistoryPoint[] = [];

  constructor(
    private readonly cap: number,
    private readonly windowMs: number,
  ) {}

  add(t: number, v: number): void {
    this.points.push({ t, v, n: 1 });
    let old = 0;
    while (old < this.points.length && this.points[old]!.t < t - this.windowMs) old++;
    if (old > 0) this.points.splice(0, old);
    if (this.points.length > this.cap) this.compact();
  }

  /** Merges the older half pairwise. */
  private compact(): void {
    const half = Math.floor(this.cap / 2);
    const merged: HistoryPoint[] = [];
    for (let i = 0; i < half; i += 2) {
      const a = this.points[i]!;
      const b = this.points[i + 1];
      if (!b || i + 1 >= half) {
        merged.push(a);
        continue;
      }
      const n = a.n + b.n;
      merged.push({ t: (a.t * a.n + b.t * b.n) / n, v: (a.v * a.n + b.v * b.n) / n, n });
    }
    this.points.splice(0, half, ...merged);
  }
}

interface DeviceReadings {
  last: Map<string, LastReading>;
  history: Map<string, ReadingHistory>;
}

export class TelemetryStore {
  private readonly devices = new Map<string, DeviceReadings>();
  private readonly dirty = new Set<string>();
  private readonly overflowLogged = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly settings: { history_points: number; history_window_s: number },
  ) {}

  /** Last values loaded from the store at start (no history). */
  load(deviceId: string, readings: Record<string, LastReading>): void {
    const device = this.device(deviceId);
    for (const [name, reading] of Object.entries(readings)) device.last.set(name, reading);
  }

  /** Records a batch of readings of one device at `at` (epoch ms); returns the readings kept. */
  record(deviceId: string, readings: Record<string, Scalar>, at: number): Record<string, Scalar> {
    const device = this.device(deviceId);
    const kept: Record<string, Scalar> = {};
    for (const [name, value] of Object.entries(readings)) {
      if (!device.last.has(name) && device.last.size >= MAX_READINGS_PER_DEVICE) {
        if (!this.overflowLogged.has(deviceId)) {
          this.overflowLogged.add(deviceId);
          this.logger.warn({ device_id: deviceId, limit: MAX_READINGS_PER_DEVICE }, 'device sends more readings than the brain keeps; new names are ignored');
        }
        continue;
      }
      kept[name] = value;
      device.last.set(name, { value, at });
      const numeric = typeof value === 'number' ? value : typeof value === 'boolean' ? Number(value) : null;
      if (numeric === null) continue;
      let series = device.history.get(name);
      if (!series) device.history.set(name, (series = new ReadingHistory(this.settings.history_points, this.settings.history_window_s * 1000)));
      series.add(at, numeric);
    }
    this.dirty.add(deviceId);
    return kept;
  }

  last(deviceId: string): ReadonlyMap<string, LastReading> {
    return this.devices.get(deviceId)?.last ?? new Map();
  }

  history(deviceId: string, reading: string): readonly HistoryPoint[] {
    return this.devices.get(deviceId)?.history.get(reading)?.points ?? [];
  }

  /** Forgets a removed device (its row is deleted by the registry). */
  forget(deviceId: string): void {
    this.devices.delete(deviceId);
    this.dirty.delete(deviceId);
    this.overflowLogged.delete(deviceId);
  }

  /** Writes the last values of every device that changed since the last flush, in one transaction. */
  async flush(): Promise<void> {
    if (this.dirty.size === 0) return;
    const rows = [...this.dirty].map((id) => [JSON.stringify(Object.fromEntries(this.last(id))), id] as const);
    this.dirty.clear();
    await this.store.write((db) => {
      for (const [readings, id] of rows) db.run('UPDATE hw_devices SET readings = ? WHERE device_id = ?', [readings, id]);
    });
  }

  private device(deviceId: string): DeviceReadings {
    let device = this.devices.get(deviceId);
    if (!device) this.devices.set(deviceId, (device = { last: new Map(), history: new Map() }));
    return device;
  }
}
