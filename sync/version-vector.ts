// Version vector (docs/sync.md, "The model"): per origin brain, which of its ops this brain has applied —
// every seq up to `through`, plus the ones applied out of order above it. It makes delivery
// exactly-once (a duplicate is recognised before it is applied), is the cursor a peer resumes from,
// and says what to send a peer: missing(theirs, mine).
import type { OriginCursor, VersionVectorWire } from '../protocol/sync';

/** Ops of one origin, `from` … `to` inclusive. */
export interface SeqRange {
  origin: string;
  from: number;
  to: number;
}

/** Most out-of-order seqs one origin's cursor carries on the wire; the rest are resent (and dropped as duplicates). */
export const WIRE_EXTRA_MAX = 4096;

interface Cursor {
  through: number;
  extra: Set<number>;
}

const emptyCursor = (): Cursor => ({ through: 0, extra: new Set() });

export class VersionVector {
  private readonly cursors = new Map<string, Cursor>();

  static fromWire(wire: VersionVectorWire): VersionVector {
    const v = new VersionVector();
    for (const [origin, c] of Object.entries(wire)) {
      if (c.through > 0) v.addRange(origin, 1, c.through);
      for (const seq of c.extra) v.add(origin, seq);
    }
    return v;
  }

  /** Whether op `seq` of `origin` was applied. */
  has(origin: string, seq: number): boolean {
    const c = this.cursors.get(origin);
    return c !== undefined && (seq <= c.through || c.extra.has(seq));
  }

  /** Records op `seq` of `origin` as applied; false when it already was. */
  add(origin: string, seq: number): boolean {
    if (seq < 1 || this.has(origin, seq)) return false;
    const c = this.cursor(origin);
    c.extra.add(seq);
    while (c.extra.delete(c.through + 1)) c.through++;
    return true;
  }

  /** Every seq up to this one of `origin` is applied. */
  through(origin: string): number {
    return this.cursors.get(origin)?.through ?? 0;
  }

  origins(): string[] {
    return [...this.cursors.keys()].sort();
  }

  /** The applied seqs of `origin` as ascending runs. */
  runs(origin: string): [number, number][] {
    const c = this.cursors.get(origin) ?? emptyCursor();
    const runs: [number, number][] = c.through > 0 ? [[1, c.through]] : [];
    for (const seq of [...c.extra].sort((a, b) => a - b)) {
      const last = runs.at(-1);
      if (last !== undefined && last[1] + 1 === seq) last[1] = seq;
      else runs.push([seq, seq]);
    }
    return runs;
  }

  /** Whether every op `other` has applied is applied here too. */
  covers(other: VersionVector): boolean {
    return other.origins().every((o) => other.runs(o).every(([from, to]) => missingIn(this, o, from, to).length === 0));
  }

  /** Adds every op `other` has applied (the union). */
  merge(other: VersionVector): void {
    for (const o of other.origins()) for (const [from, to] of other.runs(o)) this.addRange(o, from, to);
  }

  clone(): VersionVector {
    const v = new VersionVector();
    v.merge(this);
    return v;
  }

  toWire(): VersionVectorWire {
    const wire: Record<string, OriginCursor> = {};
    for (const o of this.origins()) {
      const c = this.cursors.get(o)!;
      wire[o] = { through: c.through, extra: [...c.extra].sort((a, b) => a - b).slice(0, WIRE_EXTRA_MAX) };
    }
    return wire;
  }

  private addRange(origin: string, from: number, to: number): void {
    const c = this.cursor(origin);
    if (from <= c.through + 1 && to > c.through) {
      // Walk whichever is smaller: a range of a million ops over an empty `extra` costs nothing.
      if (c.extra.size < to - c.through) {
        for (const s of c.extra) if (s <= to) c.extra.delete(s);
      } else for (let s = c.through + 1; s <= to; s++) c.extra.delete(s);
      c.through = to;
      while (c.extra.delete(c.through + 1)) c.through++;
      return;
    }
    for (let s = Math.max(from, c.through + 1); s <= to; s++) this.add(origin, s);
  }

  private cursor(origin: string): Cursor {
    let c = this.cursors.get(origin);
    if (c === undefined) {
      c = emptyCursor();
      this.cursors.set(origin, c);
    }
    return c;
  }
}

/** The seqs of `origin` within from … to that `v` has not applied, as runs. */
function missingIn(v: VersionVector, origin: string, from: number, to: number): [number, number][] {
  const out: [number, number][] = [];
  let start = Math.max(from, v.through(origin) + 1);
  for (const [a, b] of v.runs(origin)) {
    if (b < start || a > to) continue;
    if (a > start) out.push([start, a - 1]);
    start = Math.max(start, b + 1);
  }
  if (start <= to) out.push([start, to]);
  return out;
}

/** What `mine` should send to a peer whose cursor is `theirs`: the ops mine applied that theirs did not, by origin then seq. */
export function missing(theirs: VersionVector, mine: VersionVector): SeqRange[] {
  const out: SeqRange[] = [];
  for (const origin of mine.origins()) {
    for (const [from, to] of mine.runs(origin)) for (const [a, b] of missingIn(theirs, origin, from, to)) out.push({ origin, from: a, to: b });
  }
  return out;
}
