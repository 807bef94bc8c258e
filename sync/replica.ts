// One brain's synced memory in the merge core (docs/sync.md): its clock, the version vector of the ops
// it applied, the log of those ops (what it sends peers) and the merged state of every note, episode
// and triple. Local changes become stamped ops through write(); ops from peers go through apply(),
// which applies each op exactly once and refuses — with a typed result, never an exception — what is
// malformed, forged or stamped too far in the future. Nothing here touches the network or a database:
// the /sync session feeds it, and a persistent replica uses the same rules (merge.ts) row by row.
import type { EpisodeBody, NoteBody, SyncOp } from '../protocol/sync';
import { HybridClock } from './hlc';
import {
  emptyRegister,
  emptyTriple,
  liveSources,
  mergeDelete,
  mergePut,
  mergeSource,
  mergeTripleDelete,
  registerView,
  type RegisterState,
  type Tombstone,
  type TripleState,
  type Version,
} from './merge';
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

/** Everything a replica holds, in a canonical form: two replicas that applied the same ops are deepEqual. */
export interface ReplicaSnapshot {
  notes: Record<string, RegisterState<NoteBody>>;
  episodes: Record<string, RegisterState<EpisodeBody>>;
  triples: Record<string, TripleState>;
}

export interface TripleView {
  subject: string;
  predicate: string;
  object: string;
  sources: { source: string; confidence: number }[];
  /** Noisy-or of the live sources, 1 − Π(1 − cᵢ) (docs/memory.md). */
  confidence: number;
}

/**
 * A tombstone may go once every known peer has applied its delete and this brain has applied every op
 * those peers had (their cursors are covered): then no op at or below the tombstone can still arrive
 * from anyone who knew the record, and a retransmitted one is a duplicate the version vector drops.
 * "Known peers" are all the brains that share this memory (docs/sync.md, "The guarantees").
 */
export const collectable = (t: Tombstone, mine: VersionVector, peers: readonly VersionVector[]): boolean =>
  peers.every((p) => p.has(t.origin, t.seq) && mine.covers(p));

const sortedRecord = <T>(m: Map<string, T>): Record<string, T> => Object.fromEntries([...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

export class Replica {
  readonly brain: string;
  readonly clock: HybridClock;
  /** The ops applied here, per origin: the cursor peers resume from. */
  readonly applied = new VersionVector();
  /** Refused ops by reason, for svc_sync_failures_total. */
  readonly refusals: Record<RefusalReason, number> = { malformed: 0, forged: 0, clock_skew: 0 };
  private seq = 0;
  private readonly log = new Map<string, SyncOp>();
  private readonly notes = new Map<string, RegisterState<NoteBody>>();
  private readonly episodes = new Map<string, RegisterState<EpisodeBody>>();
  private readonly triples = new Map<string, TripleState>();

  constructor(options: ReplicaOptions) {
    this.brain = options.brain;
    this.clock = new HybridClock(options.brain, options.physical, options.maxSkewMs);
  }

  /** Stamps a local change as this brain's next op, applies it and returns it (for the op log and peers). */
  write(change: LocalChange): SyncOp {
    const unstamped: UnstampedOp = change.kind === 'note.put' ? { ...change, base: this.note(change.record_id)?.current?.op_id ?? null } : change;
    const op = stampOp(unstamped, this.brain, this.seq + 1, this.clock.now());
    const result = this.apply(op);
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
    this.merge(op);
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
    let n = 0;
    const sweep = <S extends { tombstone: Tombstone | null }>(m: Map<string, S>, gone: (s: S) => boolean): void => {
      for (const [id, s] of m) {
        if (s.tombstone === null || !collectable(s.tombstone, this.applied, peers)) continue;
        n++;
        if (gone(s)) m.delete(id);
        else m.set(id, { ...s, tombstone: null });
      }
    };
    sweep(this.notes, (s) => s.heads.length === 0);
    sweep(this.episodes, (s) => s.heads.length === 0);
    sweep(this.triples, (s) => s.sources.length === 0);
    return n;
  }

  note(id: string): ReturnType<typeof registerView<NoteBody>> | undefined {
    const s = this.notes.get(id);
    return s && registerView(s);
  }

  episode(id: string): EpisodeBody | null {
    const s = this.episodes.get(id);
    return s ? (registerView(s).current?.body ?? null) : null;
  }

  /** The fact as shown: null when deleted, never asserted, or withdrawn by every source. */
  triple(id: string): TripleView | null {
    const s = this.triples.get(id);
    const live = s ? liveSources(s) : [];
    if (s?.parts == null || live.length === 0) return null;
    const { subject, predicate, object } = s.parts;
    return { subject, predicate, object, sources: live.map(([source, confidence]) => ({ source, confidence })), confidence: 1 - live.reduce((p, [, c]) => p * (1 - c), 1) };
  }

  snapshot(): ReplicaSnapshot {
    return { notes: sortedRecord(this.notes), episodes: sortedRecord(this.episodes), triples: sortedRecord(this.triples) };
  }

  private refuse(reason: RefusalReason, detail: string): ApplyResult {
    this.refusals[reason]++;
    return { status: 'refused', reason, detail };
  }

  private merge(op: SyncOp): void {
    const tombstone: Tombstone = { op_id: op.op_id, origin: op.origin, seq: op.seq, hlc: op.hlc };
    const version = <B>(body: B, base: string | null): Version<B> => ({ op_id: op.op_id, hlc: op.hlc, origin: op.origin, base, body });
    const note = this.notes.get(op.record_id) ?? emptyRegister<NoteBody>();
    const episode = this.episodes.get(op.record_id) ?? emptyRegister<EpisodeBody>();
    const triple = this.triples.get(op.record_id) ?? emptyTriple();
    const entry = { hlc: op.hlc, origin: op.origin, op_id: op.op_id };
    switch (op.kind) {
      case 'note.put':
        return void this.notes.set(op.record_id, mergePut(note, version(op.body, op.base)));
      case 'note.delete':
        return void this.notes.set(op.record_id, mergeDelete(note, tombstone));
      case 'episode.put':
        return void this.episodes.set(op.record_id, mergePut(episode, version(op.body, null), false));
      case 'episode.delete':
        return void this.episodes.set(op.record_id, mergeDelete(episode, tombstone));
      case 'triple.put': {
        const { source, confidence, ...parts } = op.body;
        return void this.triples.set(op.record_id, mergeSource(triple, source, { ...entry, confidence }, parts));
      }
      case 'triple.retract':
        return void this.triples.set(op.record_id, mergeSource(triple, op.body.source, { ...entry, confidence: null }, null));
      case 'triple.delete':
        return void this.triples.set(op.record_id, mergeTripleDelete(triple, tombstone));
    }
  }
}
