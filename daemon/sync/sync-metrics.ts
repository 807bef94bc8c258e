// The three metrics of spec 4.12 for federated sync, declared by the sync capability whether or not
// sync is enabled: a deliberately single-node brain (SVC_SYNC_DISABLED=1) shows them at zero, so the
// SyncPeerDown alert (daemon/metrics/alerts.yml) never fires for it.
//
// - svc_sync_active_peers: peers with an established session now.
// - svc_sync_failures_total{reason}: sessions that ended in failure, and upgrades refused, by the
//   bounded reason set of protocol/sync-link.ts (every reason a zero series from the start).
// - svc_sync_was_active_recent: 1 while a peer is connected or was within RECENT_MS.
import type { MetricsRegistry } from '../kernel/metrics';
import { SYNC_FAILURE_REASONS, type SyncFailureReason } from '../../protocol/sync-link';

/** How long after the last session with any peer sync still counts as recently active. */
export const RECENT_MS = 15 * 60_000;

export class SyncMetrics {
  private readonly activePeers;
  private readonly failuresTotal;
  private readonly recent;
  private lastActiveAt: number | null = null;
  private readonly failed = new Map<SyncFailureReason, number>();

  constructor(registry: MetricsRegistry, owner: string) {
    this.activePeers = registry.gauge(owner, { name: 'svc_sync_active_peers', help: 'Sync peers with an established session now' });
    this.failuresTotal = registry.counter<'reason'>(owner, {
      name: 'svc_sync_failures_total',
      help: 'Sync sessions that failed, and /sync upgrades refused, by reason',
      labels: ['reason'],
      zero: SYNC_FAILURE_REASONS.map((reason) => ({ reason })),
    });
    this.recent = registry.gauge(owner, { name: 'svc_sync_was_active_recent', help: '1 while a sync peer is connected or was within the last 15 minutes' });
  }

  failure(reason: SyncFailureReason): void {
    this.failuresTotal.inc({ reason });
    this.failed.set(reason, (this.failed.get(reason) ?? 0) + 1);
  }

  /** Failures since start, by reason (the status route). */
  failures(): Record<string, number> {
    return Object.fromEntries(this.failed);
  }

  /** Sets both gauges from the number of connected peers now. */
  observe(activePeers: number, now: number): void {
    if (activePeers > 0) this.lastActiveAt = now;
    this.activePeers.set(activePeers);
    this.recent.set(this.wasActiveRecent(now) ? 1 : 0);
  }

  wasActiveRecent(now: number): boolean {
    return this.lastActiveAt !== null && now - this.lastActiveAt < RECENT_MS;
  }

  get lastActive(): number | null {
    return this.lastActiveAt;
  }
}
