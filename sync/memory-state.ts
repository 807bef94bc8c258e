// The merged state of every synced record of one brain (docs/sync.md, "The model"): notes and
// episodes as registers, triples by source, each folded from ops with the rules of merge.ts. It does
// not deduplicate (Replica's version vector does); merge() is idempotent by itself anyway, which
// test/sync/replica.test.ts checks by folding ops with duplicates straight into a MemoryState.
import type { EpisodeBody, NoteBody, SyncOp } from '../protocol/sync';
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

/** Everything a replica holds, in a canonical form: two replicas that applied the same ops are deepEqual. */
export interface MemorySnapshot {
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

export type NoteView = ReturnType<typeof registerView<NoteBody>>;

const sortedRecord = <T>(m: Map<string, T>): Record<string, T> => Object.fromEntries([...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

export class MemoryState {
  private readonly notes = new Map<string, RegisterState<NoteBody>>();
  private readonly episodes = new Map<string, RegisterState<EpisodeBody>>();
  private readonly triples = new Map<string, TripleState>();

  /** Folds one (valid) op into its record. */
  merge(op: SyncOp): void {
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

  /**
   * Drops the tombstones `may` allows; a record left with nothing live goes entirely. Returns how many
   * tombstones went.
   */
  collect(may: (t: Tombstone) => boolean): number {
    let n = 0;
    const sweep = <S extends { tombstone: Tombstone | null }>(m: Map<string, S>, empty: (s: S) => boolean): void => {
      for (const [id, s] of m) {
        if (s.tombstone === null || !may(s.tombstone)) continue;
        n++;
        if (empty(s)) m.delete(id);
        else m.set(id, { ...s, tombstone: null });
      }
    };
    sweep(this.notes, (s) => s.heads.length === 0);
    sweep(this.episodes, (s) => s.heads.length === 0);
    sweep(this.triples, (s) => s.sources.length === 0);
    return n;
  }

  note(id: string): NoteView | undefined {
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

  snapshot(): MemorySnapshot {
    return { notes: sortedRecord(this.notes), episodes: sortedRecord(this.episodes), triples: sortedRecord(this.triples) };
  }
}
