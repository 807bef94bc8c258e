// Hybrid logical clock (Kulkarni et al., "Logical Physical Clocks", 2014): a stamp is physical
// milliseconds, a logical counter and the brain id. A brain's stamps only grow, a stamp taken after
// receiving another is greater than it (so an edit made after seeing a version always wins over it),
// and stamps stay close to physical time. Every stamp is unique per brain, and (wall, logical, brain)
// orders all stamps of all brains totally: last-writer-wins needs no other tie-break.
//
// The skew bound (docs/sync.md, "The guarantees"): a remote stamp more than maxSkewMs ahead of the
// receiver's own *physical* clock is refused (a typed result, counted by the caller as clock_skew) and
// the op stays unapplied, to be accepted on a later retransmission once it is within the bound. The
// bound is taken against the physical clock, not against the receiver's HLC: against the HLC, each
// accepted stamp would move the bound forward and a runaway clock could drag every brain with it one
// bound at a time. So no brain's HLC is ever more than maxSkewMs ahead of its own physical clock, and a
// brain whose clock is wrong by less than the bound (a few hours: a wrong time zone, a Pi that has not
// reached NTP yet) still converges — its stamps are merely early or late, which last-writer-wins
// tolerates and the history of concurrent edits makes visible.
import { HLC_PATTERN } from '../protocol/sync';

export interface Hlc {
  /** Physical milliseconds since the epoch (or the largest seen), 0 … 2^48 − 1. */
  readonly wall: number;
  /** Orders stamps within one millisecond, 0 … 2^24 − 1. */
  readonly logical: number;
  /** The brain that took the stamp (a brain id, ASCII). */
  readonly brain: string;
}

export const MAX_WALL = 2 ** 48 - 1;
export const MAX_LOGICAL = 2 ** 24 - 1;
/** Default bound on how far a remote stamp may be ahead of the receiver's physical clock: one day. */
export const DEFAULT_MAX_SKEW_MS = 24 * 60 * 60 * 1000;

export type ReceiveResult = { ok: true; stamp: Hlc } | { ok: false; reason: 'clock_skew'; aheadMs: number };

const HLC_RE = new RegExp(HLC_PATTERN);

/** Total order of stamps: wall, then logical, then brain id (code-unit order, which is byte order for ASCII ids). */
export function compareHlc(a: Hlc, b: Hlc): -1 | 0 | 1 {
  if (a.wall !== b.wall) return a.wall < b.wall ? -1 : 1;
  if (a.logical !== b.logical) return a.logical < b.logical ? -1 : 1;
  if (a.brain !== b.brain) return a.brain < b.brain ? -1 : 1;
  return 0;
}

/** Fixed-width hex then the brain id: string order equals compareHlc order (and SQLite's BINARY collation). */
export const encodeHlc = (h: Hlc): string => `${h.wall.toString(16).padStart(12, '0')}-${h.logical.toString(16).padStart(6, '0')}-${h.brain}`;

/** The stamp an encoded string holds, or undefined when it is not one (wrong width, case or brain id). */
export function decodeHlc(text: string): Hlc | undefined {
  if (!HLC_RE.test(text)) return undefined;
  return { wall: parseInt(text.slice(0, 12), 16), logical: parseInt(text.slice(13, 19), 16), brain: text.slice(20) };
}

/** The next stamp after (wall, logical): a logical overflow carries into the wall (once per 16M stamps in one ms). */
const next = (wall: number, logical: number, brain: string): Hlc => (logical > MAX_LOGICAL ? { wall: wall + 1, logical: 0, brain } : { wall, logical, brain });

export class HybridClock {
  private latest: Hlc;

  /**
   * `physical` is read for every stamp (tests pass an offset clock); `since` is the largest stamp this
   * brain issued before a restart (from its op log), so stamps keep growing across restarts even when
   * the physical clock went back.
   */
  constructor(
    readonly brain: string,
    private readonly physical: () => number,
    readonly maxSkewMs: number = DEFAULT_MAX_SKEW_MS,
    since?: Hlc,
  ) {
    this.latest = { wall: since?.wall ?? 0, logical: since?.logical ?? 0, brain };
  }

  /** The largest stamp issued so far. */
  get last(): Hlc {
    return this.latest;
  }

  /** A stamp for a local change: greater than every stamp issued or received before. */
  now(): Hlc {
    const pt = this.read();
    const l = this.latest;
    this.latest = pt > l.wall ? { wall: pt, logical: 0, brain: this.brain } : next(l.wall, l.logical + 1, this.brain);
    return this.latest;
  }

  /**
   * Folds a remote stamp into the clock. Refused, and nothing changes, when it is more than maxSkewMs
   * ahead of this brain's physical clock; otherwise the returned local stamp is greater than both the
   * remote stamp and every earlier local one.
   */
  receive(remote: Hlc): ReceiveResult {
    const pt = this.read();
    if (remote.wall - pt > this.maxSkewMs) return { ok: false, reason: 'clock_skew', aheadMs: remote.wall - pt };
    const l = this.latest;
    const wall = Math.max(l.wall, remote.wall, pt);
    let logical = 0;
    if (wall === l.wall && wall === remote.wall) logical = Math.max(l.logical, remote.logical) + 1;
    else if (wall === l.wall) logical = l.logical + 1;
    else if (wall === remote.wall) logical = remote.logical + 1;
    this.latest = next(wall, logical, this.brain);
    return { ok: true, stamp: this.latest };
  }

  private read(): number {
    const t = Math.floor(this.physical());
    return Number.isFinite(t) ? Math.min(Math.max(t, 0), MAX_WALL) : 0;
  }
}
