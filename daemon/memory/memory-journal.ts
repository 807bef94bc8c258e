// The memory journal (issue 15): every change of a synced tier — notes, episodes, knowledge triples —
// is handed to a MemoryJournal inside the same store.write transaction as the change itself, with
// what a replica needs to reproduce it (the whole record after the change, or a delete) and this
// brain's next memory revision. The revision counter is a row of the same database, bumped in the same
// transaction, so revisions strictly increase and never repeat across restarts, and a change whose
// transaction fails leaves neither a journal entry nor a used revision. Without a sync capability the
// journal records nothing (the core's MemoryJournalSlot, kernel/ports.ts), and revisions still count.
//
// Not journaled, and why:
// - working memory: per session and in RAM, never synced (spec 1.3);
// - recall statistics (recall_count, recalled_at, written by decay.ts RecallTracker): how often this
//   brain's searches returned an item is local usage, not content; each brain decays by its own use;
// - derived data: vectors, the FTS indexes and their term statistics, the wiki, the fingerprints of
//   forgotten notes — each brain derives them from the synced records (a remote change updates them
//   like a local one: Memory.applyRemote);
// - session snapshots and memory settings (decay parameters): local to the brain they were made on.
import type { Db } from '../store/store';
import type { MemoryJournal, MemoryJournalChange } from '../kernel/ports';

export type { JournalEntry, JournalEpisode, JournalNote, JournalTriple, MemoryJournal, MemoryJournalChange, MemoryReplicaPort } from '../kernel/ports';

/** The journal of a brain that syncs with no one. */
export const noJournal: MemoryJournal = { record: () => undefined };

/** Bumps and returns the brain's memory revision (migration 7's one-row table); call inside a write. */
export function nextRevision(db: Db): number {
  db.run('UPDATE memory_revision SET revision = revision + 1 WHERE id = 1');
  const row = db.get<{ revision: number }>('SELECT revision FROM memory_revision WHERE id = 1');
  if (!row) throw new Error('memory_revision has no row: memory migration 7 did not run');
  return row.revision;
}

/** The brain's memory revision now: the revision of the last change journaled (0 before any). */
export const currentRevision = (db: Db): number => db.get<{ revision: number }>('SELECT revision FROM memory_revision WHERE id = 1')?.revision ?? 0;

/**
 * What the repositories write to: stamps each change with the next revision and its time, then records
 * it. Returns the revision, for the change event announced after the commit (kernel/events.ts MemoryChange).
 */
export class JournalRecorder {
  constructor(private readonly journal: MemoryJournal = noJournal) {}

  record(db: Db, change: MemoryJournalChange, at: number): number {
    const revision = nextRevision(db);
    this.journal.record(db, { ...change, revision, at });
    return revision;
  }
}
