// Applying a peer's batch (docs/sync.md "The guarantees"): every op is checked (shape, consistency and
// clock skew) before anything is applied, so a batch holding a bad op is refused whole with the
// session's BatchRefused code and none of it is marked applied; ops already applied (the version
// vector) are skipped; the rest are appended to the op log and folded into the persisted merge state
// in one transaction. A record whose shown version changed is then written through the memory's
// replica port (Memory.applyRemote: FTS, vectors and wiki follow as for a local change).
//
// The tier write is a transaction of the repositories, so it cannot share the op log's: the records
// to write are queued in `sync_pending` inside the op log's transaction and taken off once written. A
// crash in between leaves them queued, and the next apply (or flush() at start) writes them; the
// writes are idempotent, so writing one twice is harmless.
import type { EpisodeBody, NoteBody, SyncOp } from '../../protocol/sync';
import type { Cursor } from '../../protocol/sync-link';
import { decodeHlc } from '../../sync/hlc';
import { liveSources, registerView, type RegisterState, type TripleState } from '../../sync/merge';
import { parseOp } from '../../sync/ops';
import { BatchRefused } from '../../sync/session-stream';
import type { MemoryJournalChange, MemoryReplicaPort } from '../kernel/ports';
import type { Db, Store } from '../kernel/capability';
import { mergeOp, readCursor, visible, type Family, type OpLog, type RecordState } from './op-log';

const wall = (hlc: string): number => decodeHlc(hlc)?.wall ?? 0;

/** The tier-table change that makes a record show what its merged state shows. */
export function materialise(id: string, r: RecordState): MemoryJournalChange {
  if (r.family === 'note') return noteChange(id, r.state);
  if (r.family === 'episode') return episodeChange(id, r.state);
  return tripleChange(id, r.state);
}

function noteChange(id: string, s: RegisterState<NoteBody>): MemoryJournalChange {
  const current = registerView(s).current;
  if (current === null) return { kind: 'note.delete', id };
  return { kind: 'note.put', id, record: { id, ...current.body, tags: [...current.body.tags], updated_at: wall(current.hlc) } };
}

function episodeChange(id: string, s: RegisterState<EpisodeBody>): MemoryJournalChange {
  const current = registerView(s).current;
  if (current === null) return { kind: 'episode.delete', id };
  // Whether an episode is searchable is not part of the op (protocol/sync.ts EpisodeBody): a synced episode is.
  return { kind: 'episode.put', id, record: { id, ...current.body, searchable: true } };
}

function tripleChange(id: string, s: TripleState): MemoryJournalChange {
  const live = liveSources(s);
  if (s.parts === null || live.length === 0) return { kind: 'triple.delete', id };
  const at = new Map(s.sources.map(([source, e]) => [source, wall(e.hlc)]));
  const sources = live.map(([source, confidence]) => ({ source, confidence, at: at.get(source) ?? 0 }));
  const times = sources.map((x) => x.at);
  const { subject, predicate, object } = s.parts;
  const confidence = 1 - live.reduce((p, [, c]) => p * (1 - c), 1);
  return { kind: 'triple.put', id, record: { id, subject, predicate, object, confidence, sources, created_at: Math.min(...times), updated_at: Math.max(...times) } };
}

const familyOfId = (id: string): Family => (id.startsWith('note_') ? 'note' : id.startsWith('ep_') ? 'episode' : 'triple');

/**
 * The most ops of its own a brain accepts back beyond its own count (what a restore from an old backup
 * can have lost); an own op numbered further is refused as forged.
 */
export const MAX_OWN_SEQ_GAP = 10_000_000;

/** Records written to the tier tables side by side (one group commit, mostly). */
export const FLUSH_CHUNK = 256;

export class RemoteApplier {
  /** Tier writes run one at a time, so an older state is never written over a newer one. */
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly log: OpLog,
    private readonly replica: MemoryReplicaPort,
  ) {}

  /** What this brain holds now, durably. */
  cursor(): Promise<Cursor> {
    return Promise.resolve(readCursor(this.store));
  }

  /**
   * Applies a batch from `peer` (the session's SyncData.apply): resolves with this brain's cursor after
   * it, once the ops and the tier writes they caused are durable. Rejects with BatchRefused (nothing of
   * the batch applied) when an op is malformed, forged or stamped beyond the skew bound.
   */
  async apply(ops: readonly unknown[], peer: string): Promise<Cursor> {
    const parsed = ops.map((value, i) => {
      const p = parseOp(value);
      if (!p.ok) throw new BatchRefused(p.reason, `op ${i} of a batch from ${peer}: ${p.detail}`);
      return p;
    });
    await this.store.write((db) => {
      for (const { op, hlc } of parsed) {
        if (this.log.has(db, op.origin, op.seq)) continue;
        // An op of this brain's own that it lacks (its database was restored from a backup): later
        // ops of its own must number and stamp above it. Ops are not signed by their origin, so a
        // peer could claim any seq for this brain; one far beyond what a restore could have lost
        // is refused as forged instead of moving this brain's numbering.
        if (op.origin === this.log.brain) {
          const last = this.log.lastSeq(db);
          if (op.seq > last + MAX_OWN_SEQ_GAP) throw new BatchRefused('forged', `${op.op_id} from ${peer} claims this brain wrote ${op.seq - last} ops it does not know of`);
          this.log.raiseSeq(db, op.seq);
        }
        const received = this.log.clock.receive(hlc);
        if (!received.ok) throw new BatchRefused('clock_skew', `${op.op_id} from ${peer} is ${received.aheadMs} ms ahead of this brain's clock`);
        this.applyOne(db, op);
      }
      this.log.saveClock(db);
    });
    await this.flush();
    return readCursor(this.store);
  }

  /** Writes every queued record to the tier tables (at start, after a crash between the two commits). */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.flushQueued());
    // The caller gets the failure through `run`; the chain only waits for it to end.
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private applyOne(db: Db, op: SyncOp): void {
    this.log.append(db, op);
    if (mergeOp(this.log, db, op)) db.run('INSERT OR IGNORE INTO sync_pending (record_id) VALUES (?)', [op.record_id]);
  }

  /**
   * Writes the queued records FLUSH_CHUNK at a time: the records of a chunk are written side by side,
   * so the store's group commit takes them in a few transactions instead of one durable commit each,
   * and a chunk leaves the queue in one write once all of it is in the tier tables.
   */
  private async flushQueued(): Promise<void> {
    const ids = this.store.all<{ record_id: string }>('SELECT record_id FROM sync_pending ORDER BY record_id').map((r) => r.record_id);
    for (let i = 0; i < ids.length; i += FLUSH_CHUNK) {
      const chunk = ids.slice(i, i + FLUSH_CHUNK);
      await Promise.all(chunk.map((id) => this.writeRecord(id)));
      await this.store.write((db) => {
        for (const id of chunk) db.run('DELETE FROM sync_pending WHERE record_id = ?', [id]);
      });
    }
  }

  /** A local write of the same record may commit while this one is written: write again until the state held still. */
  private async writeRecord(id: string): Promise<void> {
    for (;;) {
      const r = this.log.record(this.store, id, familyOfId(id));
      await this.replica.applyRemote(materialise(id, r));
      if (visible(this.log.record(this.store, id, r.family)) === visible(r)) return;
    }
  }
}
