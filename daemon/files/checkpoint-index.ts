// $SVC_HOME/checkpoints/index.db: one row per change the agent made (docs/files.md, Checkpoints).
// Opened only under the checkpoint lock (checkpoint-lock.ts), for one transaction, then closed: the
// holder knows nobody else has the file open, so it clears a `.lock` directory and plays back a journal
// left by a killed holder before opening, and can never roll back a live transaction of another
// process. The brain waits for the lock without blocking its event loop; the CLI waits synchronously.
import { existsSync, mkdirSync, openSync, closeSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import { rollbackHotJournal, type JournalRecovery } from '../store/hot-journal';
import { CheckpointLock, CheckpointLockBusyError } from './checkpoint-lock';

export type ChangeKind = 'write' | 'edit' | 'move' | 'delete' | 'command';
/** What was at the path before the change. */
export type EntryKind = 'file' | 'directory' | 'absent';

export interface ChangeRow {
  id: number;
  turn_id: string;
  session_id: string;
  at: string;
  tool: string;
  kind: ChangeKind;
  /** The path changed (move: where it was; command: the working folder). */
  path: string;
  /** move: where it went. */
  to_path: string | null;
  entry: EntryKind;
  /** sha256 of the prior content, kept under blobs/ (null: absent, a directory, or not kept). */
  prior_blob: string | null;
  prior_mode: number | null;
  /** sha256 of what the agent left (files written, edited, moved); null for a delete or a folder. */
  after_hash: string | null;
  /** 'pending' from before the mutation until it is known to have happened ('done'). */
  state: 'pending' | 'done';
  revertible: 0 | 1;
  /** Why not revertible; for a command, its argv as JSON. */
  note: string | null;
  reverted_at: string | null;
}

export type NewChange = Omit<ChangeRow, 'id' | 'state' | 'after_hash' | 'reverted_at'>;

export interface TurnSummary {
  turn_id: string;
  session_id: string;
  first_at: string;
  last_at: string;
  changes: number;
  reverted: number;
  not_revertible: number;
}

const SCHEMA_VERSION = 1;
const SCHEMA = `
CREATE TABLE IF NOT EXISTS changes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  turn_id TEXT NOT NULL, session_id TEXT NOT NULL, at TEXT NOT NULL, tool TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('write','edit','move','delete','command')),
  path TEXT NOT NULL, to_path TEXT,
  entry TEXT NOT NULL CHECK (entry IN ('file','directory','absent')),
  prior_blob TEXT, prior_mode INTEGER, after_hash TEXT,
  state TEXT NOT NULL CHECK (state IN ('pending','done')),
  revertible INTEGER NOT NULL, note TEXT, reverted_at TEXT);
CREATE INDEX IF NOT EXISTS changes_turn ON changes (turn_id, id);
PRAGMA user_version = ${SCHEMA_VERSION};`;

/** What opening found left by a killed holder; `null` when nothing was. */
export interface IndexRecovery {
  lockDirCleared: boolean;
  journal: JournalRecovery;
}

/** The queries on an open index, valid only inside CheckpointIndex.use. */
export class IndexDb {
  constructor(private readonly db: sqlite.Database) {}

  insert(c: NewChange): number {
    const r = this.db.run(
      `INSERT INTO changes (turn_id, session_id, at, tool, kind, path, to_path, entry, prior_blob, prior_mode, state, revertible, note)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
      [c.turn_id, c.session_id, c.at, c.tool, c.kind, c.path, c.to_path, c.entry, c.prior_blob, c.prior_mode, c.revertible, c.note],
    );
    return Number(r.lastInsertRowid);
  }

  finish(id: number, afterHash: string | null): void {
    this.db.run(`UPDATE changes SET state = 'done', after_hash = ? WHERE id = ?`, [afterHash, id]);
  }

  /** A change whose tool failed before touching anything. */
  drop(id: number): void {
    this.db.run('DELETE FROM changes WHERE id = ?', [id]);
  }

  turns(limit: number): TurnSummary[] {
    return this.db.all(
      `SELECT turn_id, MIN(session_id) AS session_id, MIN(at) AS first_at, MAX(at) AS last_at, COUNT(*) AS changes,
              SUM(reverted_at IS NOT NULL) AS reverted, SUM(revertible = 0) AS not_revertible
       FROM changes GROUP BY turn_id ORDER BY MAX(id) DESC LIMIT ?`,
      [limit],
    ) as unknown as TurnSummary[];
  }

  latestTurn(): string | null {
    const rows = this.db.all('SELECT turn_id FROM changes ORDER BY id DESC LIMIT 1') as { turn_id: string }[];
    return rows[0]?.turn_id ?? null;
  }

  changes(turnId: string): ChangeRow[] {
    return this.db.all('SELECT * FROM changes WHERE turn_id = ? ORDER BY id', [turnId]) as unknown as ChangeRow[];
  }

  markReverted(ids: readonly number[], at: string): void {
    for (const id of ids) this.db.run('UPDATE changes SET reverted_at = ? WHERE id = ?', [at, id]);
  }

  /** Retention: keeps the newest `keepTurns` turns, and none older than `before`. Returns rows deleted. */
  prune(keepTurns: number, before: string): number {
    const r = this.db.run(
      `DELETE FROM changes WHERE turn_id NOT IN (SELECT turn_id FROM changes GROUP BY turn_id ORDER BY MAX(id) DESC LIMIT ?)
         OR turn_id IN (SELECT turn_id FROM changes GROUP BY turn_id HAVING MAX(at) < ?)`,
      [keepTurns, before],
    );
    return r.changes;
  }

  referencedBlobs(): Set<string> {
    const rows = this.db.all('SELECT DISTINCT prior_blob FROM changes WHERE prior_blob IS NOT NULL') as { prior_blob: string }[];
    return new Set(rows.map((r) => r.prior_blob));
  }

  integrityCheck(): string {
    const rows = this.db.all('PRAGMA integrity_check') as { integrity_check: string }[];
    return rows.map((r) => r.integrity_check).join('; ');
  }
}

export interface CheckpointIndexOptions {
  /** How long to wait for the lock before giving up (CheckpointLockBusyError). */
  waitMs?: number;
  /** Called when opening cleared what a killed holder left. */
  onRecovery?: (r: IndexRecovery) => void;
}

const POLL_MS = 5;
const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class CheckpointIndex {
  readonly file: string;
  private readonly lock: CheckpointLock;
  private readonly waitMs: number;

  constructor(
    readonly dir: string,
    private readonly options: CheckpointIndexOptions = {},
  ) {
    this.file = join(dir, 'index.db');
    this.lock = new CheckpointLock(join(dir, 'index.lock'));
    this.waitMs = options.waitMs ?? 30_000;
  }

  /** Runs fn in one transaction, waiting synchronously for the lock (the CLI). */
  use<T>(fn: (db: IndexDb) => T): T {
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const r = this.attempt(fn);
      if (r.ran) return r.value;
      if (Date.now() >= deadline) throw new CheckpointLockBusyError(this.lock.file, this.lock.holder());
      sleepSync(POLL_MS);
    }
  }

  /** Runs fn in one transaction, waiting for the lock without blocking the event loop (the brain). */
  async useAsync<T>(fn: (db: IndexDb) => T): Promise<T> {
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const r = this.attempt(fn);
      if (r.ran) return r.value;
      if (Date.now() >= deadline) throw new CheckpointLockBusyError(this.lock.file, this.lock.holder());
      await sleep(POLL_MS);
    }
  }

  /** Whether an index exists at all (the CLI on a home where the agent never changed a file). */
  exists(): boolean {
    return existsSync(this.file);
  }

  /** Lock, recover, open, one transaction, close, unlock — all in one synchronous step. */
  private attempt<T>(fn: (db: IndexDb) => T): { ran: true; value: T } | { ran: false } {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    if (!this.lock.tryAcquire()) return { ran: false };
    try {
      this.recover();
      closeSync(openSync(this.file, 'a', 0o600)); // created private whatever the umask
      const db = new sqlite.Database(this.file);
      try {
        db.exec('PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;');
        const version = (db.all('PRAGMA user_version') as { user_version: number }[])[0]?.user_version ?? 0;
        if (version > SCHEMA_VERSION) throw new Error(`${this.file} is at schema version ${version}, newer than this svc knows (${SCHEMA_VERSION}); upgrade svc`);
        db.exec('BEGIN IMMEDIATE');
        try {
          if (version < SCHEMA_VERSION) db.exec(SCHEMA);
          const value = fn(new IndexDb(db));
          db.exec('COMMIT');
          return { ran: true, value };
        } catch (err) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw err;
        }
      } finally {
        db.close();
      }
    } finally {
      this.lock.release();
    }
  }

  /** With the lock held nobody else has index.db open: what is there was left by a dead holder. */
  private recover(): void {
    const lockDir = `${this.file}.lock`;
    const lockDirCleared = existsSync(lockDir);
    if (lockDirCleared) rmSync(lockDir, { recursive: true, force: true });
    const journal = rollbackHotJournal(this.file);
    if (lockDirCleared || journal.state !== 'none') this.options.onRecovery?.({ lockDirCleared, journal });
  }
}
