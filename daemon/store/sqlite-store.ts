// Store on SQLite compiled to WebAssembly (node-sqlite3-wasm): a real database file, FTS5, and
// SQLite's own rollback journal. WAL is not available through its VFS (measured; docs/storage.md),
// so durability is journal_mode=DELETE + synchronous=FULL, and throughput comes from group commit:
// every write issued in one event-loop turn is a SAVEPOINT inside one transaction, committed (one
// fsync) on the next turn, and only then acknowledged.
import sqlite from 'node-sqlite3-wasm';
import type { Logger } from 'pino';
import type { Db, Migration, RunResult, SqlParams, SqlValue, Store } from './store';
import { rollbackHotJournal, type JournalRecovery } from './hot-journal';

type Statement = ReturnType<sqlite.Database['prepare']>;

const MAX_CACHED_STATEMENTS = 200;

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  value: unknown;
}

export interface SqliteStoreOptions {
  synchronous?: 'FULL' | 'NORMAL';
  groupCommit?: boolean;
  logger?: Logger;
}

export class MigrationError extends Error {}

/**
 * The library resets a statement only inside its own (untyped) `_reset`, before binding. Its return
 * value repeats the statement's last error, which the caller has already seen, so it is not checked.
 * If an upgrade removes it, this throws on first use instead of silently keeping locks.
 */
function resetStatement(st: Statement): void {
  const reset = (st as unknown as { _reset?: () => boolean })._reset;
  if (typeof reset !== 'function') throw new Error('node-sqlite3-wasm Statement._reset is missing; see resetStatement in daemon/store/sqlite-store.ts');
  reset.call(st);
}

export class SqliteStore implements Store {
  private readonly db: sqlite.Database;
  private readonly statements = new Map<string, Statement>();
  private batch: Pending[] | null = null;
  private readonly groupCommit: boolean;
  private readonly logger: Logger | undefined;
  /** What opening found: a leftover journal rolled back, discarded, or none (hot-journal.ts). */
  readonly recovery: JournalRecovery;

  constructor(
    readonly path: string,
    options: SqliteStoreOptions = {},
  ) {
    // node-sqlite3-wasm would read past a journal left by kill -9 instead of rolling it back.
    this.recovery = rollbackHotJournal(path);
    if (this.recovery.state !== 'none') options.logger?.warn({ recovery: this.recovery }, 'found the journal of a transaction interrupted by a crash');
    this.db = new sqlite.Database(path);
    this.groupCommit = options.groupCommit ?? true;
    this.logger = options.logger;
    this.db.exec(`PRAGMA journal_mode=DELETE; PRAGMA synchronous=${options.synchronous ?? 'FULL'}; PRAGMA foreign_keys=ON;`);
    this.db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      component TEXT NOT NULL, version INTEGER NOT NULL, description TEXT NOT NULL, applied_at TEXT NOT NULL,
      PRIMARY KEY (component, version))`);
  }

  private statement(sql: string): Statement {
    let st = this.statements.get(sql);
    if (st) {
      // Most recently used last, so eviction below drops the least recently used.
      this.statements.delete(sql);
      this.statements.set(sql, st);
      return st;
    }
    st = this.db.prepare(sql);
    this.statements.set(sql, st);
    // Bounded for a daemon that runs for months: SQL built with a variable number of placeholders
    // would otherwise grow the cache (and WASM memory) without end. Every use resets its statement,
    // so a cached one is never in the middle of a step when finalized.
    if (this.statements.size > MAX_CACHED_STATEMENTS) {
      const [oldest, evicted] = this.statements.entries().next().value as [string, Statement];
      this.statements.delete(oldest);
      evicted.finalize();
    }
    return st;
  }

  /**
   * node-sqlite3-wasm binds text NUL-terminated: "a\u0000b" would be stored as "a" while the caller
   * believes all of it was. Every input schema refuses NUL (protocol/text.ts); this is the floor under
   * them for text that arrives another way (a tool argument, a model's answer): refused, never cut.
   */
  private static bind(params: SqlParams | undefined): sqlite.BindValues | undefined {
    if (params) for (const v of Array.isArray(params) ? (params as readonly SqlValue[]) : Object.values(params)) if (typeof v === 'string' && v.includes('\u0000')) throw new NulInTextError();
    return params as unknown as sqlite.BindValues | undefined;
  }

  /**
   * Every use of a cached statement ends with a reset. node-sqlite3-wasm does not reset after `get`
   * (one row read, the statement stays active) nor after an error: an active SELECT keeps its read
   * lock — the `<db>.lock` directory, which shuts every other connection out and is what a kill -9
   * leaves behind — and a failed statement makes the next use of the same SQL fail with "Could not
   * reset statement prior to binding new values" (test/daemon/store/sqlite-store.test.ts).
   */
  private use<R>(sql: string, fn: (st: Statement) => R): R {
    const st = this.statement(sql);
    try {
      return fn(st);
    } finally {
      resetStatement(st);
    }
  }

  run(sql: string, params?: SqlParams): RunResult {
    return this.use(sql, (st) => st.run(SqliteStore.bind(params)));
  }

  get<T extends object>(sql: string, params?: SqlParams): T | undefined {
    return this.use(sql, (st) => (st.get(SqliteStore.bind(params)) ?? undefined) as T | undefined);
  }

  all<T extends object>(sql: string, params?: SqlParams): T[] {
    return this.use(sql, (st) => st.all(SqliteStore.bind(params)) as T[]);
  }

  write<T>(fn: (db: Db) => T): Promise<T> {
    if (!this.groupCommit) {
      try {
        return Promise.resolve(this.transaction(fn));
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
    if (!this.batch) {
      this.db.exec('BEGIN IMMEDIATE');
      this.batch = [];
      setImmediate(() => this.commitBatch());
    }
    this.db.exec('SAVEPOINT svc_write');
    let value: T;
    try {
      value = fn(this);
    } catch (err) {
      this.db.exec('ROLLBACK TO svc_write; RELEASE svc_write');
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    this.db.exec('RELEASE svc_write');
    return new Promise<T>((resolve, reject) => {
      this.batch?.push({ resolve: resolve as (v: unknown) => void, reject, value });
    });
  }

  private commitBatch(): void {
    const batch = this.batch;
    if (!batch) return;
    this.batch = null;
    try {
      this.db.exec('COMMIT');
    } catch (err) {
      // The commit itself failed (disk full, I/O error): nothing in the batch is durable.
      this.logger?.error({ err, writes: batch.length }, 'store commit failed; rolling back batch');
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      for (const p of batch) p.reject(err);
      return;
    }
    for (const p of batch) p.resolve(p.value);
  }

  /** Synchronous transaction (migrations, bulk loads). Not for use while a group commit is open. */
  transaction<T>(fn: (db: Db) => T): T {
    this.commitBatch();
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const value = fn(this);
      this.db.exec('COMMIT');
      return value;
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }

  migrate(component: string, migrations: readonly Migration[]): void {
    const sorted = [...migrations].sort((a, b) => a.version - b.version);
    sorted.forEach((m, i) => {
      if (m.version !== i + 1) throw new MigrationError(`${component}: migrations must be numbered 1..n without gaps (found ${m.version} at position ${i + 1})`);
    });
    const row = this.get<{ v: SqlValue }>('SELECT MAX(version) AS v FROM schema_migrations WHERE component = ?', [component]);
    const current = Number(row?.v ?? 0);
    if (current > sorted.length) {
      throw new MigrationError(`${component}: the database is at schema version ${current}, newer than this svc knows (${sorted.length}); upgrade svc instead of downgrading`);
    }
    for (const m of sorted.slice(current)) {
      this.transaction((db) => {
        if (typeof m.up === 'string') this.db.exec(m.up);
        else m.up(db);
        db.run('INSERT INTO schema_migrations (component, version, description, applied_at) VALUES (?, ?, ?, ?)', [
          component,
          m.version,
          m.description,
          new Date().toISOString(),
        ]);
      });
      this.logger?.info({ component, version: m.version }, `migrated: ${m.description}`);
    }
  }

  /** Raw multi-statement SQL, for migrations and maintenance. */
  exec(sql: string): void {
    this.db.exec(sql);
  }

  close(): void {
    if (!this.db.isOpen) return;
    this.commitBatch();
    for (const st of this.statements.values()) st.finalize();
    this.statements.clear();
    this.db.close();
  }
}

/** Text with U+0000 cannot be stored faithfully (see SqliteStore.bind). */
export class NulInTextError extends Error {
  constructor() {
    super('text containing U+0000 cannot be stored');
    this.name = 'NulInTextError';
  }
}
