// Counting attempts per caller in a sliding window (docs/pairing.md "Limits"): PIN guesses, wrong code
// claims and unauthenticated announces. In memory: a restart forgets the counts, which a guesser cannot
// cause. Bounded: at most `maxKeys` callers are tracked; past it the oldest are forgotten.
import type { Clock } from '../kernel/capability';

export interface WindowLimit {
  /** Attempts allowed per window. */
  max: number;
  windowMs: number;
}

export class AttemptLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly limit: WindowLimit,
    private readonly clock: Clock,
    private readonly maxKeys = 10_000,
  ) {}

  /** Milliseconds until `key` may try again (0: it may now). */
  retryAfterMs(key: string): number {
    const recent = this.recent(key);
    if (recent.length < this.limit.max) return 0;
    return Math.max(1, recent[recent.length - this.limit.max]! + this.limit.windowMs - this.clock.now());
  }

  /** Counts one attempt of `key`. */
  record(key: string): void {
    const recent = this.recent(key);
    recent.push(this.clock.now());
    // Re-inserted last, so the map's order is least recently used first.
    this.hits.delete(key);
    this.hits.set(key, recent.slice(-this.limit.max));
    if (this.hits.size > this.maxKeys) this.hits.delete(this.hits.keys().next().value!);
  }

  /** Forgets `key` (its attempts succeeded). */
  clear(key: string): void {
    this.hits.delete(key);
  }

  private recent(key: string): number[] {
    const since = this.clock.now() - this.limit.windowMs;
    return (this.hits.get(key) ?? []).filter((t) => t > since);
  }
}
