// A brain for the sync data-layer tests: the real memory service on a real SQLite file with the op log
// attached as its journal, and the applier and outbound reader a /sync session would call.
import { MemoryJournalSlot, type JournalEntry, type MemoryJournal } from '../../../daemon/kernel/ports';
import type { Db } from '../../../daemon/store/store';
import type { RemoteApplier } from '../../../daemon/sync/apply-remote';
import type { OpLog } from '../../../daemon/sync/op-log';
import { createSyncData } from '../../../daemon/sync/sync-data';
import type { SyncData } from '../../../sync/session-stream';
import { memoryFixture, type MemoryFixture } from '../memory/memory-fixture';

export interface SyncBrain {
  id: string;
  mem: MemoryFixture;
  log: OpLog;
  applier: RemoteApplier;
  /** What a /sync session would draw on. */
  data: SyncData;
  /** Makes the next journaled change's transaction fail after its ops were appended. */
  failNext(): void;
}

/** `start`: where this brain's memory clock and physical clock start (a restart may start it earlier). */
export function syncBrain(id: string, opts: { dir?: string; start?: number } = {}): SyncBrain {
  let now = opts.start ?? 1_750_000_000_000;
  const clock = (): number => (now += 1000);
  const slot = new MemoryJournalSlot();
  const mem = memoryFixture({ journal: slot, clock, ...(opts.dir ? { dir: opts.dir } : {}) });
  const layer = createSyncData({ store: mem.store, brain: id, replica: mem.memory, physical: () => now });
  const inner = layer.journal;
  let fail = false;
  const journal: MemoryJournal = {
    record(db: Db, entry: JournalEntry): void {
      inner.record(db, entry);
      if (fail) {
        fail = false;
        throw new Error(`the transaction of revision ${entry.revision} fails after its ops were appended`);
      }
    },
  };
  slot.use(journal);
  return { id, mem, log: layer.log, applier: layer.applier, data: layer.data, failNext: () => void (fail = true) };
}

/** Sends `to` every op `from` has that `to` lacks, in batches of about `maxBytes`; returns how many ops went. */
export async function exchange(from: SyncBrain, to: SyncBrain, maxBytes = 2048): Promise<number> {
  let n = 0;
  const since = await to.data.cursor();
  for await (const batch of from.data.ops(since, maxBytes)) {
    await to.data.apply(batch, from.id);
    n += batch.length;
  }
  return n;
}

const round = (x: number): number => Math.round(x * 1e9) / 1e9;

/**
 * The synced tier tables, without what each brain keeps or derives for itself: seq and recall counts,
 * the times a brain stamps when it writes (updated_at, a source's `at`), and whether an episode is
 * searchable (not part of the op).
 */
export function syncedTables(b: SyncBrain): Record<string, unknown[]> {
  const s = b.mem.store;
  return {
    notes: s.all('SELECT id, text, source, tags, created_at, text_key, cjk FROM memory_notes ORDER BY id'),
    episodes: s.all('SELECT id, session_id, summary, reason, summariser, message_count, started_at, ended_at, created_at, cjk FROM memory_episodes ORDER BY id'),
    triples: s.all<{ confidence: number }>('SELECT id, subject, predicate, object, subject_key, predicate_key, object_key, confidence, cjk FROM memory_triples ORDER BY id').map((t) => ({ ...t, confidence: round(t.confidence) })),
    sources: s.all('SELECT triple_id, source, confidence FROM memory_triple_sources ORDER BY triple_id, source'),
  };
}

/** The brain's op log, in its own order. */
export const opsOf = (b: SyncBrain): { op_id: string; hlc: string; kind: string; record_id: string }[] => b.mem.store.all('SELECT op_id, hlc, kind, record_id FROM sync_ops ORDER BY ord');

/** Records applied to the op log whose tier-table write is still due. */
export const pendingOf = (b: SyncBrain): number => b.mem.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM sync_pending')!.n;

export async function closeAll(...brains: SyncBrain[]): Promise<void> {
  for (const b of brains) await b.mem.close();
}
