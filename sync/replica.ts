// One brain's synced memory in the merge core (docs/sync.md): its clock, the version vector of the ops
// it applied, the log of those ops (what it sends peers) and the merged state of every note, episode
// and triple (memory-state.ts). Local changes become stamped ops through write(); ops from peers go
// through apply(), which applies each op exactly once and refuses — with a typed result, never an
// exception — what is malformed, forged or stamped too far in the future. Nothing here touches the
// network or a database: the /sync session feeds it, and a persistent replica uses the same rules
// (merge.ts) row by row.
import type { SyncOp } from '../protocol/sync';
import { HybridClock } from './hlc';
import type { Tombstone } from './merge';
import { MemoryState } from './memory-state';
import { parseOp, stampOp, type LocalChange, type OpRefusal, type UnstampedOp } from './ops';
import { missing, VersionVector } from './version-vector';

export type RefusalReason = OpRefusal | 'clock_skew';
export type ApplyResult = { status: 'applied'; op: SyncOp } | { status: 'duplicate' } | { status: 'refused'; reason: RefusalReason; detail: string };

export interface ReplicaOptions {
  /** This brain's id (a brain id, mesh/brain-id.ts). */
  brain: string;
  /** Physical time in ms; injected so tests can run a brain whose clock is off. */
  physical: () => number;
  /** How far ahead of the physical clock a remote stamp may be (sync/hlc.ts); default one day. */
  maxSkewMs?: number;
}

/**
 * A tombstone may go once every known peer has applied its delete and this brain has applied every op
 * those peers had (their cursors are covered): then no op at or below the tombstone can still arrive
 * from anyone who knew the record, and a retransmitted one is a duplicate the version vector drops.
 * "Known peers" are all the brains that share this memory (docs/sync.md, "The guarantees").
 */
export const collectable = (t: Tombstone, mine: VersionVector, peers: readonly VersionVector[]): boolean =>
  peers.every((p) => p.has(t.origin, t.seq) && mine.covers(p));

export class Replica {
  readonly brain: string;
  readonly clock: HybridClock;
  /** The ops applied here, per origin: the cursor peers resume from. */
  readonly applied = new VersionVector();
  /** The merged records; read views through it (note, episode, triple, snapshot). */
  readonly state = new MemoryState();
  /** Refused ops by reason, for svc_sync_failures_total. */
  readonly refusals: Record<RefusalReason, number> = { malformed: 0, forged: 0, clock_skew: 0 };
  private seq = 0;
  private readonly log = new Map<string, SyncOp>();

  constructor(options: ReplicaOptions) {
    this.brain = options.brain;
    this.clock = new HybridClock(options.brain, options.physical, options.maxSkewMs);
  }

  /** Stamps a local change as this brain's next op, applies it and returns it (for the op log and peers). */
  write(change: LocalChange): SyncOp {
    const unstamped: UnstampedOp = change.kind === 'note.put' ? { ...change, base: this.state.note(change.record_id)?.current?.op_id ?? null } : change;
    const op = stampOp(unstamped, this.brain, this.seq + 1, this.clock.now());
    const result = this.apply(op);
    // A local op is built from checked parts; a refusal here is a bug in the caller's change, not input.
    if (result.status !== 'applied') throw new Error(`a local ${op.kind} was not applied: ${result.status === 'refused' ? result.detail : 'duplicate'}`);
    return op;
  }

  /** Applies an op from anywhere (a peer, or this brain's own log): exactly once, or refused. */
  apply(value: unknown): ApplyResult {
    const parsed = parseOp(value);
    if (!parsed.ok) return this.refuse(parsed.reason, parsed.detail);
    const { op, hlc } = parsed;
    if (this.applied.has(op.origin, op.seq)) return { status: 'duplicate' };
    if (op.origin !== this.brain) {
      const received = this.clock.receive(hlc);
      if (!received.ok) return this.refuse('clock_skew', `${op.op_id} is ${received.aheadMs} ms ahead of this brain's clock`);
    } else this.seq = Math.max(this.seq, op.seq);
    this.state.merge(op);
    this.applied.add(op.origin, op.seq);
    this.log.set(op.op_id, op);
    return { status: 'applied', op };
  }

  /** The ops this brain applied that a peer at cursor `theirs` lacks, by origin then seq. */
  opsFor(theirs: VersionVector): SyncOp[] {
    return missing(theirs, this.applied).flatMap((r) => {
      const ops: SyncOp[] = [];
      for (let seq = r.from; seq <= r.to; seq++) {
        const op = this.log.get(`${r.origin}:${seq}`);
        if (op !== undefined) ops.push(op);
      }
      return ops;
    });
  }

  /** Drops every tombstone the peers' cursors allow (collectable); returns how many went. */
  collect(peers: readonly VersionVector[]): number {
    return this.state.collect((t) => collectable(t, this.applied, peers));
  }

  private refuse(reason: RefusalReason, detail: string): ApplyResult {
    this.refusals[reason]++;
    return { status: 'refused', reason, detail };
  }
}
