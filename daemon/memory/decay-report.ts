// What `svc memory decay` shows: the parameters, how retention is spread over the stored items, and
// the curve itself (retention after N days for 0, 1 and 3 recalls).
import type { DecayReport } from '../../protocol/memory';
import type { Store } from '../store/store';
import { decayFactor, retention, type DecayParams } from './decay';
import { TIERS } from './tier-tables';

const CURVE_DAYS = [1, 7, 30, 90, 180, 365, 730];

export function decayReport(store: Store, params: DecayParams, now: number): DecayReport {
  const buckets = Array.from({ length: 10 }, (_, i) => ({ from: i / 10, to: (i + 1) / 10, items: 0 }));
  let items = 0;
  let neverRecalled = 0;
  for (const t of TIERS) {
    for (const r of store.all<{ created_at: number; recalled_at: number | null; recall_count: number }>(`SELECT created_at, recalled_at, recall_count FROM ${t.table}`)) {
      items++;
      if (r.recall_count === 0) neverRecalled++;
      buckets[Math.min(9, Math.floor(retention(params, r, now) * 10))]!.items++;
    }
  }
  const curve = [0, 1, 3].flatMap((recalls) =>
    CURVE_DAYS.map((days) => {
      const r = retention(params, { created_at: now - days * 86_400_000, recalled_at: null, recall_count: recalls }, now);
      return { days, recalls, retention: Math.round(r * 1000) / 1000, relevance_factor: Math.round(decayFactor(params, r) * 1000) / 1000 };
    }),
  );
  return { params, retention: { items, buckets, never_recalled: neverRecalled }, curve };
}
