// Decay (issue 3): memories that are never recalled lose ranking weight along a forgetting curve,
// R = 2^(-t / h), where t is the time since the item was last recalled (or created) and the half-life
// h grows by `rehearsal_factor` with every recall (spaced repetition). Decay only scales ranking;
// nothing is ever deleted by it, and the relevance floor is applied before it (docs/memory.md).
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Store } from '../store/store';
import { tierTables } from './tier-tables';
import type { Tier } from '../../protocol/memory';

export const DecayParams = Type.Object(
  {
    enabled: Type.Boolean({ default: true }),
    half_life_days: Type.Number({ minimum: 1, maximum: 36500, default: 90, description: 'retention halves after this long without recall' }),
    rehearsal_factor: Type.Number({ minimum: 1, maximum: 10, default: 2, description: 'each recall multiplies the half-life by this' }),
    weight: Type.Number({ minimum: 0, maximum: 1, default: 0.3, description: 'largest share of relevance decay can take away' }),
  },
  { additionalProperties: false },
);
export type DecayParams = Static<typeof DecayParams>;

const DAY_MS = 86_400_000;
const MAX_HALF_LIFE_DAYS = 365 * 1000;

export function retention(p: DecayParams, item: { created_at: number; recalled_at: number | null; recall_count: number }, now: number): number {
  if (!p.enabled) return 1;
  const since = Math.max(0, now - (item.recalled_at ?? item.created_at)) / DAY_MS;
  const halfLife = Math.min(MAX_HALF_LIFE_DAYS, p.half_life_days * Math.pow(p.rehearsal_factor, Math.min(item.recall_count, 64)));
  return Math.pow(2, -since / halfLife);
}

/** The multiplier decay applies to relevance: 1 for a fresh item, 1 - weight for a long-forgotten one. */
export const decayFactor = (p: DecayParams, r: number): number => (p.enabled ? 1 - p.weight * (1 - r) : 1);

/** Decay parameters: settings.json gives the defaults; `svc memory decay --set` tunes them at run time. */
export class DecayStore {
  private cached: DecayParams | undefined;

  constructor(
    private readonly store: Store,
    private readonly defaults: DecayParams,
  ) {}

  get(): DecayParams {
    if (this.cached) return this.cached;
    const row = this.store.get<{ value: string }>("SELECT value FROM memory_settings WHERE key = 'decay'");
    const merged = { ...this.defaults, ...(row ? (JSON.parse(row.value) as Partial<DecayParams>) : {}) };
    this.cached = Value.Check(DecayParams, merged) ? merged : this.defaults;
    return this.cached;
  }

  async set(patch: Partial<DecayParams>): Promise<DecayParams> {
    const next = { ...this.get(), ...patch };
    await this.store.write((db) => db.run("INSERT INTO memory_settings (key, value) VALUES ('decay', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [JSON.stringify(next)]));
    this.cached = next;
    return next;
  }
}

/**
 * Recalls (items returned by search) are counted in RAM and written every few seconds in small
 * transactions, one per event-loop turn: a commit blocks the loop for its fsync, so one big flush
 * would stall every search waiting behind it (measured: the API p99 doubled). A kill -9 can lose the
 * last seconds of recall counts, which only shifts ranking weights.
 */
export class RecallTracker {
  private pending = new Map<string, { tier: Tier; count: number; at: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly onError: (err: unknown) => void,
    private readonly flushEveryMs = 10_000,
    private readonly chunk = 128,
  ) {}

  record(items: readonly { tier: Tier; id: string }[], now: number): void {
    for (const { tier, id } of items) {
      const p = this.pending.get(id);
      if (p) {
        p.count++;
        p.at = now;
      } else this.pending.set(id, { tier, count: 1, at: now });
    }
  }

  start(): void {
    this.timer = setInterval(() => void this.flush().catch(this.onError), this.flushEveryMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending];
    this.pending = new Map();
    for (let i = 0; i < batch.length; i += this.chunk) {
      if (i > 0) await new Promise((r) => setImmediate(r));
      await this.store.write((db) => {
        for (const [id, p] of batch.slice(i, i + this.chunk)) db.run(`UPDATE ${tierTables(p.tier).table} SET recall_count = recall_count + ?, recalled_at = ? WHERE id = ?`, [p.count, p.at, id]);
      });
    }
  }
}
