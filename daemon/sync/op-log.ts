// The brain's persistent op log (docs/sync.md, "The model"): every op this brain wrote or applied, the
// version vector of those ops, the merged state of every synced record (merge.ts, one JSON row per
// record) and the clock's last stamp, all in brain.db under the component `sync`. Everything here is
// synchronous on a Db, so it runs inside the caller's transaction: a local change's op lands in the
// memory write's own transaction (journal-to-ops.ts), a batch from a peer in one transaction of its
// own (apply-remote.ts).
import type { EpisodeBody, NoteBody, SyncOp } from '../../protocol/sync';
import type { Cursor } from '../../protocol/sync-link';
import { decodeHlc, encodeHlc, HybridClock, type Hlc } from '../../sync/hlc';
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
} from '../../sync/merge';
import { collectable } from '../../sync/replica';
import { VersionVector } from '../../sync/version-vector';
import type { Db, Migration } from '../kernel/capability';

export const SYNC_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'sync op log, version vector, merged record state, clock and peer cursors',
    up: `
      CREATE TABLE sync_ops (
        ord INTEGER PRIMARY KEY AUTOINCREMENT,
        op_id TEXT NOT NULL UNIQUE,
        origin TEXT NOT NULL,
        seq INTEGER NOT NULL,
        hlc TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        record_id TEXT NOT NULL,
        op TEXT NOT NULL,
        UNIQUE (origin, seq)
      );
      CREATE INDEX sync_ops_record ON sync_ops (record_id);
      CREATE TABLE sync_applied (origin TEXT PRIMARY KEY, through INTEGER NOT NULL, extra TEXT NOT NULL);
      CREATE TABLE sync_records (
        record_id TEXT PRIMARY KEY,
        family TEXT NOT NULL CHECK (family IN ('note', 'episode', 'triple')),
        state TEXT NOT NULL,
        tombstone TEXT
      );
      CREATE INDEX sync_records_tombstone ON sync_records (tombstone) WHERE tombstone IS NOT NULL;
      CREATE TABLE sync_pending (record_id TEXT PRIMARY KEY);
      CREATE TABLE sync_clock (id INTEGER PRIMARY KEY CHECK (id = 1), brain TEXT NOT NULL, last TEXT, seq INTEGER NOT NULL);
      CREATE TABLE sync_peers (peer TEXT PRIMARY KEY, cursor TEXT NOT NULL, updated_at INTEGER NOT NULL);
    `,
  },
];

export type Family = 'note' | 'episode' | 'triple';
export type RecordState = { family: 'note'; state: RegisterState<NoteBody> } | { family: 'episode'; state: RegisterState<EpisodeBody> } | { family: 'triple'; state: TripleState };

export const familyOf = (kind: SyncOp['kind']): Family => (kind.startsWith('note.') ? 'note' : kind.startsWith('episode.') ? 'episode' : 'triple');

/** The op log of one brain on its own database; `store.migrate('sync', SYNC_MIGRATIONS)` must have run. */
export class OpLog {
  readonly clock: HybridClock;

  /**
   * Reads the last stamp and binds the log to `brain`: a database made for another brain id is
   * refused (its ops would be numbered as someone else's).
   */
  constructor(
    private readonly db: Db,
    readonly brain: string,
    physical: () => number,
    maxSkewMs?: number,
  ) {
    const row = db.get<{ brain: string; last: string | null }>('SELECT brain, last FROM sync_clock WHERE id = 1');
    if (row === undefined) db.run('INSERT INTO sync_clock (id, brain, last, seq) VALUES (1, ?, NULL, 0)', [brain]);
    else if (row.brain !== brain) throw new Error(`the sync op log belongs to brain ${row.brain}, not ${brain}`);
    const since: Hlc | undefined = row?.last == null ? undefined : decodeHlc(row.last);
    this.clock = new HybridClock(brain, physical, maxSkewMs, since);
  }

  /** Persists the clock's last stamp (call in the transaction that used it). */
  saveClock(db: Db): void {
    db.run('UPDATE sync_clock SET last = ? WHERE id = 1', [encodeHlc(this.clock.last)]);
  }

  /** The next seq of this brain's own ops, reserved in `db`'s transaction (gapless: a rollback returns it). */
  nextSeq(db: Db): number {
    db.run('UPDATE sync_clock SET seq = seq + 1 WHERE id = 1');
    return db.get<{ seq: number }>('SELECT seq FROM sync_clock WHERE id = 1')!.seq;
  }

  /** The seq of this brain's last own op (0 before any). */
  lastSeq(db: Db): number {
    return db.get<{ seq: number }>('SELECT seq FROM sync_clock WHERE id = 1')!.seq;
  }

  /** Raises this brain's own seq to at least `seq` (an own op came back from a peer, e.g. after a restore). */
  raiseSeq(db: Db, seq: number): void {
    db.run('UPDATE sync_clock SET seq = MAX(seq, ?) WHERE id = 1', [seq]);
  }

  /** Appends an op and marks it applied. */
  append(db: Db, op: SyncOp): void {
    db.run('INSERT INTO sync_ops (op_id, origin, seq, hlc, kind, record_id, op) VALUES (?, ?, ?, ?, ?, ?, ?)', [op.op_id, op.origin, op.seq, op.hlc, op.kind, op.record_id, JSON.stringify(op)]);
    const v = readVector(db, [op.origin]);
    v.add(op.origin, op.seq);
    const c = v.toWire()[op.origin]!;
    db.run('INSERT INTO sync_applied (origin, through, extra) VALUES (?, ?, ?) ON CONFLICT(origin) DO UPDATE SET through = excluded.through, extra = excluded.extra', [op.origin, c.through, JSON.stringify(c.extra)]);
  }

  has(db: Db, origin: string, seq: number): boolean {
    return readVector(db, [origin]).has(origin, seq);
  }

  record(db: Db, id: string, family: Family): RecordState {
    const row = db.get<{ family: Family; state: string }>('SELECT family, state FROM sync_records WHERE record_id = ?', [id]);
    if (row !== undefined && row.family !== family) throw new Error(`record ${id} is a ${row.family}, not a ${family}`);
    if (family === 'triple') return { family, state: row ? (JSON.parse(row.state) as TripleState) : emptyTriple() };
    if (family === 'note') return { family, state: row ? (JSON.parse(row.state) as RegisterState<NoteBody>) : emptyRegister<NoteBody>() };
    return { family, state: row ? (JSON.parse(row.state) as RegisterState<EpisodeBody>) : emptyRegister<EpisodeBody>() };
  }

  saveRecord(db: Db, id: string, r: RecordState): void {
    db.run('INSERT INTO sync_records (record_id, family, state, tombstone) VALUES (?, ?, ?, ?) ON CONFLICT(record_id) DO UPDATE SET state = excluded.state, tombstone = excluded.tombstone', [
      id,
      r.family,
      JSON.stringify(r.state),
      r.state.tombstone?.op_id ?? null,
    ]);
  }
}

/** The version vector of the ops applied (all origins, or the ones named). */
export function readVector(db: Db, origins?: readonly string[]): VersionVector {
  const rows =
    origins === undefined
      ? db.all<{ origin: string; through: number; extra: string }>('SELECT origin, through, extra FROM sync_applied')
      : origins.flatMap((o) => db.all<{ origin: string; through: number; extra: string }>('SELECT origin, through, extra FROM sync_applied WHERE origin = ?', [o]));
  return VersionVector.fromWire(Object.fromEntries(rows.map((r) => [r.origin, { through: r.through, extra: JSON.parse(r.extra) as number[] }])));
}

/** This brain's cursor for the link: per origin, every op up to that count is held (docs/sync.md "The session"). */
export function readCursor(db: Db): Cursor {
  return Object.fromEntries(db.all<{ origin: string; through: number }>('SELECT origin, through FROM sync_applied WHERE through > 0 ORDER BY origin').map((r) => [r.origin, r.through]));
}

/** Remembers a peer's cursor (what it is known to hold), for tombstone collection and status. */
export function savePeerCursor(db: Db, peer: string, cursor: Cursor, at: number): void {
  db.run('INSERT INTO sync_peers (peer, cursor, updated_at) VALUES (?, ?, ?) ON CONFLICT(peer) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at', [peer, JSON.stringify(cursor), at]);
}

export function peerCursor(db: Db, peer: string): Cursor | null {
  const row = db.get<{ cursor: string }>('SELECT cursor FROM sync_peers WHERE peer = ?', [peer]);
  return row ? (JSON.parse(row.cursor) as Cursor) : null;
}

/** A note's current version and the revisions that lost to it in concurrent edits, oldest first (for the API). */
export function noteRevisions(db: Db, id: string): { current: Version<NoteBody> | null; history: Version<NoteBody>[]; deleted: boolean } | null {
  const row = db.get<{ state: string }>("SELECT state FROM sync_records WHERE record_id = ? AND family = 'note'", [id]);
  return row ? registerView(JSON.parse(row.state) as RegisterState<NoteBody>) : null;
}

/** What a record shows, as comparable text: a change of it is what must be written to the tier tables. */
export function visible(r: RecordState): string {
  if (r.family === 'triple') {
    const live = liveSources(r.state);
    return JSON.stringify(live.length === 0 || r.state.parts === null ? null : { parts: r.state.parts, live });
  }
  const current = r.family === 'note' ? registerView(r.state).current : registerView(r.state).current;
  return JSON.stringify(current === null ? null : current.op_id);
}

/** Folds one valid op into its record's persisted state (merge.ts rules); true when what the record shows changed. */
export function mergeOp(log: OpLog, db: Db, op: SyncOp): boolean {
  const family = familyOf(op.kind);
  const before = log.record(db, op.record_id, family);
  const after = merged(before, op);
  log.saveRecord(db, op.record_id, after);
  return visible(before) !== visible(after);
}

function merged(r: RecordState, op: SyncOp): RecordState {
  const tombstone: Tombstone = { op_id: op.op_id, origin: op.origin, seq: op.seq, hlc: op.hlc };
  const entry = { hlc: op.hlc, origin: op.origin, op_id: op.op_id };
  const version = <B>(body: B, base: string | null): Version<B> => ({ op_id: op.op_id, hlc: op.hlc, origin: op.origin, base, body });
  switch (op.kind) {
    case 'note.put':
      return r.family === 'note' ? { family: 'note', state: mergePut(r.state, version(op.body, op.base)) } : r;
    case 'note.delete':
      return r.family === 'note' ? { family: 'note', state: mergeDelete(r.state, tombstone) } : r;
    case 'episode.put':
      return r.family === 'episode' ? { family: 'episode', state: mergePut(r.state, version(op.body, null), false) } : r;
    case 'episode.delete':
      return r.family === 'episode' ? { family: 'episode', state: mergeDelete(r.state, tombstone) } : r;
    case 'triple.put': {
      const { source, confidence, ...parts } = op.body;
      return r.family === 'triple' ? { family: 'triple', state: mergeSource(r.state, source, { ...entry, confidence }, parts) } : r;
    }
    case 'triple.retract':
      return r.family === 'triple' ? { family: 'triple', state: mergeSource(r.state, op.body.source, { ...entry, confidence: null }, null) } : r;
    case 'triple.delete':
      return r.family === 'triple' ? { family: 'triple', state: mergeTripleDelete(r.state, tombstone) } : r;
  }
}

/**
 * Drops every tombstone the peers' cursors allow (sync/replica.ts collectable: each known peer holds
 * the delete, and this brain holds everything those peers hold); a record left with nothing live goes
 * entirely. `peers` are the cursors of every brain that shares this memory. Returns how many went.
 */
export function collectTombstones(db: Db, peers: readonly Cursor[]): number {
  const mine = readVector(db);
  const theirs = peers.map((c) => VersionVector.fromWire(Object.fromEntries(Object.entries(c).map(([o, through]) => [o, { through, extra: [] }]))));
  let n = 0;
  for (const row of db.all<{ record_id: string; family: Family; state: string }>('SELECT record_id, family, state FROM sync_records WHERE tombstone IS NOT NULL')) {
    const state = JSON.parse(row.state) as RegisterState<unknown> | TripleState;
    if (state.tombstone === null || !collectable(state.tombstone, mine, theirs)) continue;
    n++;
    const empty = 'heads' in state ? state.heads.length === 0 : state.sources.length === 0;
    if (empty) db.run('DELETE FROM sync_records WHERE record_id = ?', [row.record_id]);
    else db.run('UPDATE sync_records SET state = ?, tombstone = NULL WHERE record_id = ?', [JSON.stringify({ ...state, tombstone: null }), row.record_id]);
  }
  return n;
}
