// Backfill (docs/sync.md "Records from before sync"): notes, episodes and facts a brain held before its
// op log existed — written before memory migration 7 or the sync tables, or while sync.enabled was
// false and nothing was journaled — become ops like a fresh write's: a put stamped now, one
// `triple.put` per source of a fact (as journal-to-ops.ts maps a new fact), appended to the op log and
// folded into the merged state.
//
// A record needs backfilling exactly when the op log holds no state for it (no `sync_records` row).
// So a run is idempotent (a second appends nothing), a deleted record is never announced again (its
// tombstone is a row), and a record a local write journaled meanwhile is left to the journal. The
// work is cut into transactions of `batch` records, each selecting what still lacks a row inside
// itself: a 100k-note brain never holds one long write, and a run killed between two transactions
// leaves committed batches whole, which the next run skips. A record whose op would be refused by a
// peer (protocol/sync.ts rules: text too long, a fact whose id is not the hash of its parts) is not
// appended — one malformed op would have every batch holding it refused — and is counted as skipped.
//
// Run it once the journal is attached, so a record written after its batch is journaled itself. The
// tier tables are read with SQL here (the memory's own schema, memory-schema.ts): the memory exposes
// no port that lists its records, and only these columns are read.
import type { EpisodeBody, NoteBody } from '../../protocol/sync';
import { parseOp, stampOp, type UnstampedOp } from '../../sync/ops';
import type { Db, Store } from '../kernel/capability';
import { mergeOp, type OpLog } from './op-log';

export interface BackfillCounts {
  notes: number;
  episodes: number;
  /** Facts (records), each appended as one op per source. */
  triples: number;
  /** Ops left out because a peer would refuse them (they are looked at again by the next run). */
  skipped: number;
}

export interface BackfillOptions {
  /** Records per transaction; 500 by default. */
  batch?: number;
}

interface Candidate {
  seq: number;
  id: string;
  ops: UnstampedOp[];
}

/** One tier: its table, and the ops a record of it stands for. */
interface TierReader {
  key: 'notes' | 'episodes' | 'triples';
  /** Records after `seq` (in seq order) that have no state in the op log and none queued to write. */
  read(db: Db, after: number, limit: number): Candidate[];
}

const UNSYNCED = (table: string) =>
  `FROM ${table} x WHERE x.seq > ? AND NOT EXISTS (SELECT 1 FROM sync_records r WHERE r.record_id = x.id) AND NOT EXISTS (SELECT 1 FROM sync_pending p WHERE p.record_id = x.id) ORDER BY x.seq LIMIT ?`;

const tags = (text: string): string[] => (text === '' ? [] : (JSON.parse(text) as string[]));

const notes: TierReader = {
  key: 'notes',
  read: (db, after, limit) =>
    db.all<{ seq: number; id: string; text: string; source: string; tags: string; created_at: number }>(`SELECT x.seq, x.id, x.text, x.source, x.tags, x.created_at ${UNSYNCED('memory_notes')}`, [after, limit]).map((r) => {
      const body: NoteBody = { text: r.text, source: r.source, tags: tags(r.tags), created_at: r.created_at };
      return { seq: r.seq, id: r.id, ops: [{ kind: 'note.put', record_id: r.id, base: null, body }] };
    }),
};

const episodes: TierReader = {
  key: 'episodes',
  read: (db, after, limit) =>
    db.all<EpisodeBody & { seq: number; id: string }>(`SELECT x.seq, x.id, x.session_id, x.summary, x.reason, x.summariser, x.message_count, x.started_at, x.ended_at, x.created_at ${UNSYNCED('memory_episodes')}`, [after, limit]).map(
      ({ seq, id, ...body }) => ({ seq, id, ops: [{ kind: 'episode.put', record_id: id, body }] }),
    ),
};

const triples: TierReader = {
  key: 'triples',
  read: (db, after, limit) =>
    db.all<{ seq: number; id: string; subject: string; predicate: string; object: string }>(`SELECT x.seq, x.id, x.subject, x.predicate, x.object ${UNSYNCED('memory_triples')}`, [after, limit]).map(({ seq, id, subject, predicate, object }) => {
      const sources = db.all<{ source: string; confidence: number }>('SELECT source, confidence FROM memory_triple_sources WHERE triple_id = ? ORDER BY source', [id]);
      return { seq, id, ops: sources.map(({ source, confidence }): UnstampedOp => ({ kind: 'triple.put', record_id: id, body: { subject, predicate, object, source, confidence } })) };
    }),
};

/** Why a peer would refuse `change` as this brain's next op, or null when it would take it. */
function refusal(log: OpLog, change: UnstampedOp): string | null {
  const parsed = parseOp(stampOp(change, log.brain, 1, log.clock.last));
  return parsed.ok ? null : parsed.detail;
}

/** Appends the ops of up to `limit` records after `after`; returns how many records had any, the ops skipped, and where to go on. */
function backfillBatch(db: Db, log: OpLog, tier: TierReader, after: number, limit: number): { records: number; skipped: number; last: number | null } {
  const candidates = tier.read(db, after, limit);
  let records = 0;
  let skipped = 0;
  for (const c of candidates) {
    const valid = c.ops.filter((change) => refusal(log, change) === null);
    skipped += c.ops.length - valid.length;
    for (const change of valid) mergeOp(log, db, appended(db, log, change));
    if (valid.length > 0) records++;
  }
  if (records > 0) log.saveClock(db);
  return { records, skipped, last: candidates.length < limit ? null : candidates.at(-1)!.seq };
}

function appended(db: Db, log: OpLog, change: UnstampedOp) {
  const op = stampOp(change, log.brain, log.nextSeq(db), log.clock.now());
  log.append(db, op);
  return op;
}

/**
 * Gives every record of the tier tables that the op log has no state for its ops, in transactions of
 * `batch` records (see the header). Resolves with how many records of each tier got ops.
 */
export async function backfillOps(store: Store, log: OpLog, opts: BackfillOptions = {}): Promise<BackfillCounts> {
  const limit = opts.batch ?? 500;
  const counts: BackfillCounts = { notes: 0, episodes: 0, triples: 0, skipped: 0 };
  for (const tier of [notes, episodes, triples]) {
    let after: number | null = 0;
    while (after !== null) {
      const from: number = after;
      // Nothing left of this tier (every start after the first): no write, so no durable commit.
      if (tier.read(store, from, 1).length === 0) break;
      const done = await store.write((db) => backfillBatch(db, log, tier, from, limit));
      counts[tier.key] += done.records;
      counts.skipped += done.skipped;
      after = done.last;
    }
  }
  return counts;
}
