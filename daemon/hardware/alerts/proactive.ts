// Proactive alerts from telemetry (spec 2.14 category `proactive`, 4.6 POST /api/proactive/dismiss;
// docs/hardware.md "Proactive alerts"): threshold rules per reading, a node's battery running low, and
// a node that stays offline. Each alert is announced once on the bus (a notification of category
// proactive, priority low, for push and channels) and to the open /v1/session clients, and stays
// `active` until its condition clears (`cleared`) or the user dismisses it (`dismissed`).
//
// What a dismissal teaches (the spec leaves the choice to the brain):
// - a threshold alert adapts the threshold of that device and reading: the effective threshold moves
//   to the value that was dismissed plus a margin (5% of its size, at least 0.5), in the direction of
//   the rule, so the same level no longer alerts and a clearly worse one still does;
// - a battery_low or node_offline alert is suppressed for that node for 24 hours, doubling with each
//   further dismissal (at most 30 days).
// Both are stored, so a restart keeps what was learned.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { CapabilityContext, Clock, Db, Migration } from '../../kernel/capability';
import type { EventBus } from '../../kernel/event-bus';
import type { BrainEvent } from '../../kernel/events';
import type { ClientConnections } from '../../kernel/ports';
import { AppError, notFound } from '../../kernel/errors';
import type { AlertKind, DismissResult, ProactiveAlert } from '../../../protocol/hardware';
import type { HardwareSettings } from '../hardware-settings';

export const PROACTIVE_COMPONENT = 'hardware-alerts';

export const PROACTIVE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'proactive alerts and what dismissals taught',
    up: `CREATE TABLE proactive_alerts (
      alert_id TEXT PRIMARY KEY,
      kind TEXT NOT NULL,
      device_id TEXT,
      node_id TEXT,
      reading TEXT,
      direction TEXT,
      value TEXT,
      threshold REAL,
      message TEXT NOT NULL,
      status TEXT NOT NULL,
      created_at REAL NOT NULL,
      dismissed_at REAL
    );
    CREATE INDEX proactive_alerts_status ON proactive_alerts (status, created_at);
    CREATE TABLE proactive_learning (
      subject TEXT PRIMARY KEY,
      threshold REAL,
      suppressed_until REAL,
      dismissals INTEGER NOT NULL
    );`,
  },
];

/** A stored alert is kept this long after it stopped being active. */
const KEEP_MS = 30 * 86_400_000;
const SUPPRESS_MS = 86_400_000;
const MAX_SUPPRESS_MS = 30 * 86_400_000;
/** A low battery alert clears when the level is this many points above the limit (no flapping at the edge). */
const BATTERY_HYSTERESIS = 5;

type Scalar = string | number | boolean | null;
type Direction = 'above' | 'below';

interface AlertRow {
  alert_id: string;
  kind: AlertKind;
  device_id: string | null;
  node_id: string | null;
  reading: string | null;
  direction: Direction | null;
  value: string | null;
  threshold: number | null;
  message: string;
  status: ProactiveAlert['status'];
  created_at: number;
  dismissed_at: number | null;
}

interface Learning {
  subject: string;
  threshold: number | null;
  suppressed_until: number | null;
  dismissals: number;
}

export interface ProactiveDeps {
  store: CapabilityContext['store'];
  clock: Clock;
  bus: Pick<EventBus<BrainEvent>, 'emit'>;
  connections: Pick<ClientConnections, 'broadcast'>;
  logger: Logger;
  settings: HardwareSettings['alerts'];
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const subjectOf = (kind: AlertKind, id: string, reading: string | null, direction: Direction | null): string => `${kind}|${id}|${reading ?? ''}|${direction ?? ''}`;

export class ProactiveAlerts {
  private readonly active = new Map<string, AlertRow>();
  private readonly learning = new Map<string, Learning>();
  private readonly offlineTimers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly deps: ProactiveDeps) {}

  /** Loads the active alerts and what was learned; forgets alerts long inactive. */
  start(): void {
    const { store } = this.deps;
    for (const row of store.all<AlertRow>(`SELECT * FROM proactive_alerts WHERE status = 'active'`)) this.active.set(this.keyOf(row), row);
    for (const row of store.all<Learning>('SELECT * FROM proactive_learning')) this.learning.set(row.subject, row);
    const before = this.deps.clock.now() - KEEP_MS;
    void store.write((db) => db.run(`DELETE FROM proactive_alerts WHERE status != 'active' AND created_at < ?`, [before]));
  }

  stop(): void {
    for (const timer of this.offlineTimers.values()) clearTimeout(timer);
    this.offlineTimers.clear();
  }

  /** Readings of one device: checks every threshold rule that names them. */
  readings(deviceId: string, nodeId: string, readings: Readonly<Record<string, Scalar>>): void {
    const rules = this.deps.settings.thresholds;
    if (rules.length === 0) return;
    for (const rule of rules) {
      if (rule.device !== undefined && rule.device !== deviceId) continue;
      const value = readings[rule.reading];
      if (typeof value !== 'number' || !Number.isFinite(value)) continue;
      if (rule.above !== undefined) this.checkThreshold(deviceId, nodeId, rule.reading, 'above', rule.above, value);
      if (rule.below !== undefined) this.checkThreshold(deviceId, nodeId, rule.reading, 'below', rule.below, value);
    }
  }

  /** A node's battery level (heartbeat battery_pct): low below the limit, recovered only BATTERY_HYSTERESIS points above it. */
  battery(nodeId: string, pct: number): void {
    const limit = this.deps.settings.battery_low_pct;
    if (pct < limit) {
      this.raise({ kind: 'battery_low', device_id: null, node_id: nodeId, reading: 'battery_pct', direction: 'below', value: pct, threshold: limit, message: `${nodeId}: battery at ${pct}% (below ${limit}%)` });
    } else if (pct >= limit + BATTERY_HYSTERESIS) {
      this.clear(subjectOf('battery_low', nodeId, 'battery_pct', 'below'));
    }
  }

  /** The node's link closed: an alert follows unless it is back within node_offline_after_s. */
  nodeDown(nodeId: string): void {
    if (this.offlineTimers.has(nodeId)) return;
    const after = this.deps.settings.node_offline_after_s;
    const timer = setTimeout(() => {
      this.offlineTimers.delete(nodeId);
      this.raise({ kind: 'node_offline', device_id: null, node_id: nodeId, reading: null, direction: null, value: null, threshold: null, message: `${nodeId} has been offline for more than ${after} s` });
    }, after * 1000);
    timer.unref();
    this.offlineTimers.set(nodeId, timer);
  }

  nodeUp(nodeId: string): void {
    const timer = this.offlineTimers.get(nodeId);
    if (timer) clearTimeout(timer);
    this.offlineTimers.delete(nodeId);
    this.clear(subjectOf('node_offline', nodeId, null, null));
  }

  list(status?: ProactiveAlert['status']): ProactiveAlert[] {
    const rows = status === undefined
      ? this.deps.store.all<AlertRow>('SELECT * FROM proactive_alerts ORDER BY created_at DESC LIMIT 500')
      : this.deps.store.all<AlertRow>('SELECT * FROM proactive_alerts WHERE status = ? ORDER BY created_at DESC LIMIT 500', [status]);
    return rows.map(toAlert);
  }

  /** POST /api/proactive/dismiss: 404 unknown, 409 when it is no longer active. */
  async dismiss(alertId: string): Promise<DismissResult> {
    const row = this.deps.store.get<AlertRow>('SELECT * FROM proactive_alerts WHERE alert_id = ?', [alertId]);
    if (!row) throw notFound('alert', alertId);
    if (row.status !== 'active') throw new AppError('CONFLICT', `alert ${alertId} is ${row.status}, not active`, { status: row.status });
    const now = this.deps.clock.now();
    const subject = this.keyOf(row);
    const before = this.learning.get(subject);
    const learned: Learning = { subject, threshold: before?.threshold ?? null, suppressed_until: before?.suppressed_until ?? null, dismissals: (before?.dismissals ?? 0) + 1 };
    if (row.kind === 'threshold' && row.direction !== null && row.threshold !== null) {
      const value = Number(row.value);
      const margin = Math.max(Math.abs(value) * 0.05, 0.5);
      learned.threshold = row.direction === 'above' ? Math.max(row.threshold, value + margin) : Math.min(row.threshold, value - margin);
    } else {
      learned.suppressed_until = now + Math.min(SUPPRESS_MS * 2 ** (learned.dismissals - 1), MAX_SUPPRESS_MS);
    }
    await this.deps.store.write((db) => {
      db.run(`UPDATE proactive_alerts SET status = 'dismissed', dismissed_at = ? WHERE alert_id = ?`, [now, alertId]);
      saveLearning(db, learned);
    });
    this.active.delete(subject);
    this.learning.set(subject, learned);
    this.deps.logger.info({ alert_id: alertId, kind: row.kind, threshold: learned.threshold, suppressed_until: iso(learned.suppressed_until) }, 'proactive alert dismissed');
    return {
      alert: toAlert({ ...row, status: 'dismissed', dismissed_at: now }),
      learned: { suppressed_until: iso(learned.suppressed_until), threshold: learned.threshold, dismissals: learned.dismissals },
    };
  }

  private checkThreshold(deviceId: string, nodeId: string, reading: string, direction: Direction, configured: number, value: number): void {
    const subject = subjectOf('threshold', deviceId, reading, direction);
    const threshold = this.learning.get(subject)?.threshold ?? configured;
    const crossed = direction === 'above' ? value > threshold : value < threshold;
    if (!crossed) {
      this.clear(subject);
      return;
    }
    this.raise({ kind: 'threshold', device_id: deviceId, node_id: nodeId, reading, direction, value, threshold, message: `${deviceId}: ${reading} is ${value}, ${direction} ${threshold}` });
  }

  private raise(alert: Omit<AlertRow, 'alert_id' | 'status' | 'created_at' | 'dismissed_at' | 'value'> & { value: Scalar }): void {
    const subject = subjectOf(alert.kind, alert.device_id ?? alert.node_id ?? '', alert.reading, alert.direction);
    if (this.active.has(subject)) return;
    const now = this.deps.clock.now();
    const suppressed = this.learning.get(subject)?.suppressed_until;
    if (suppressed != null && suppressed > now) return;
    const row: AlertRow = { ...alert, value: alert.value === null ? null : JSON.stringify(alert.value), alert_id: `alert_${randomBytes(9).toString('base64url')}`, status: 'active', created_at: now, dismissed_at: null };
    this.active.set(subject, row);
    void this.deps.store
      .write((db) => db.run('INSERT INTO proactive_alerts (alert_id, kind, device_id, node_id, reading, direction, value, threshold, message, status, created_at, dismissed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [row.alert_id, row.kind, row.device_id, row.node_id, row.reading, row.direction, row.value, row.threshold, row.message, row.status, row.created_at, row.dismissed_at]))
      .catch((err: unknown) => this.deps.logger.error({ err, alert_id: row.alert_id }, 'could not store a proactive alert'));
    const public_ = toAlert(row);
    this.deps.bus.emit({ type: 'proactive_alert', category: 'proactive', priority: 'low', alert: public_, at: now });
    this.deps.connections.broadcast({ type: 'proactive_alert', session_id: '', payload: public_ });
    this.deps.logger.info({ alert_id: row.alert_id, kind: row.kind, device_id: row.device_id, node_id: row.node_id }, row.message);
  }

  private clear(subject: string): void {
    const row = this.active.get(subject);
    if (!row) return;
    this.active.delete(subject);
    void this.deps.store
      .write((db) => db.run(`UPDATE proactive_alerts SET status = 'cleared' WHERE alert_id = ? AND status = 'active'`, [row.alert_id]))
      .catch((err: unknown) => this.deps.logger.error({ err, alert_id: row.alert_id }, 'could not clear a proactive alert'));
  }

  private keyOf(row: Pick<AlertRow, 'kind' | 'device_id' | 'node_id' | 'reading' | 'direction'>): string {
    return subjectOf(row.kind, row.device_id ?? row.node_id ?? '', row.reading, row.direction);
  }
}

function saveLearning(db: Db, l: Learning): void {
  db.run('INSERT INTO proactive_learning (subject, threshold, suppressed_until, dismissals) VALUES (?, ?, ?, ?) ON CONFLICT (subject) DO UPDATE SET threshold = excluded.threshold, suppressed_until = excluded.suppressed_until, dismissals = excluded.dismissals', [l.subject, l.threshold, l.suppressed_until, l.dismissals]);
}

function toAlert(row: AlertRow): ProactiveAlert {
  return {
    alert_id: row.alert_id,
    kind: row.kind,
    category: 'proactive',
    device_id: row.device_id,
    node_id: row.node_id,
    reading: row.reading,
    value: row.value === null ? null : (JSON.parse(row.value) as Scalar),
    threshold: row.threshold,
    message: row.message,
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
    dismissed_at: iso(row.dismissed_at),
  };
}
