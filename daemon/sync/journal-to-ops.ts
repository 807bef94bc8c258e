// The memory journal of a brain that syncs (docs/memory.md "The journal", docs/sync.md "The model"):
// each journaled change becomes this brain's next op(s), stamped with its clock, appended to the op log
// and folded into the merged state — all on the `db` of the memory change's own transaction, so an op
// exists exactly when its change committed (a failing transaction leaves neither, and returns the seq).
//
// Entries are whole records; ops are whole records too, except facts: the journal's `triple.put`
// carries the fact with every source backing it, an op asserts one source (`triple.put`) or withdraws
// one (`triple.retract`). So a fact's entry becomes the difference against the merged state: an
// assertion for each source that is new or changed its confidence, a retraction for each live source
// the fact no longer has.
import { stampOp, type UnstampedOp } from '../../sync/ops';
import { liveSources, registerView } from '../../sync/merge';
import type { JournalEntry, MemoryJournal } from '../kernel/ports';
import type { Db } from '../kernel/capability';
import { mergeOp, type OpLog } from './op-log';

export class OpLogJournal implements MemoryJournal {
  /**
   * Nothing is announced from here: the transaction may still fail. A session learns of new ops from
   * the memory's change events, which follow the commit.
   */
  constructor(private readonly log: OpLog) {}

  record(db: Db, entry: JournalEntry): void {
    for (const change of this.translate(db, entry)) {
      const op = stampOp(change, this.log.brain, this.log.nextSeq(db), this.log.clock.now());
      this.log.append(db, op);
      mergeOp(this.log, db, op);
    }
    this.log.saveClock(db);
  }

  /** The ops a journal entry stands for, before they are stamped. */
  private translate(db: Db, entry: JournalEntry): UnstampedOp[] {
    switch (entry.kind) {
      case 'note.put': {
        const r = this.log.record(db, entry.id, 'note');
        const base = r.family === 'note' ? (registerView(r.state).current?.op_id ?? null) : null;
        const { text, source, tags, created_at } = entry.record;
        return [{ kind: 'note.put', record_id: entry.id, base, body: { text, source, tags, created_at } }];
      }
      case 'episode.put': {
        const { session_id, summary, reason, summariser, message_count, started_at, ended_at, created_at } = entry.record;
        return [{ kind: 'episode.put', record_id: entry.id, body: { session_id, summary, reason, summariser, message_count, started_at, ended_at, created_at } }];
      }
      case 'triple.put': {
        const r = this.log.record(db, entry.id, 'triple');
        const live = new Map(r.family === 'triple' ? liveSources(r.state) : []);
        const { subject, predicate, object, sources } = entry.record;
        const now = new Set(sources.map((s) => s.source));
        return [
          ...sources.filter((s) => live.get(s.source) !== s.confidence).map((s): UnstampedOp => ({ kind: 'triple.put', record_id: entry.id, body: { subject, predicate, object, source: s.source, confidence: s.confidence } })),
          ...[...live.keys()].filter((s) => !now.has(s)).map((source): UnstampedOp => ({ kind: 'triple.retract', record_id: entry.id, body: { source } })),
        ];
      }
      case 'note.delete':
      case 'episode.delete':
      case 'triple.delete':
        return [{ kind: entry.kind, record_id: entry.id }];
    }
  }
}
