// Spec 4.12 metrics whose emitter does not exist yet: the skill sandbox (the approval queue's gauge
// moved into daemon/approvals/, the sync metrics into daemon/sync/). They are declared here until the
// skills capability lands; each then moves into its capability, which declares it through its own context.metrics (and
// its line goes from here). Until then they are zero-valued series, so the alerts and dashboard
// panels built on them stay quiet instead of reading a missing series (docs/metrics.md).
import type { MetricsRegistry } from '../kernel/metrics';

/** The owner these are declared under until their capability declares them. */
export const AWAITING_OWNER = 'awaiting-capabilities';

/** Why a sandboxed skill was killed (spec 4.12), each a zero-valued series from the start. */
export const SANDBOX_KILL_REASONS = ['timeout', 'memory', 'fault'] as const;

/** Declares the metrics nothing emits yet; called once by the composition root (daemon/brain.ts). */
export function declareAwaitingCapabilities(registry: MetricsRegistry): void {
  registry.counter<'reason'>(AWAITING_OWNER, {
    name: 'svc_sandbox_kills_total',
    help: 'Sandboxed skills killed, by reason',
    labels: ['reason'],
    zero: SANDBOX_KILL_REASONS.map((reason) => ({ reason })),
  });
}
