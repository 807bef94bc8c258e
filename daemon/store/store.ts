// The storage port. Repositories (notes, approvals, webhooks, ...) take a Store and own their tables
// through their own numbered migrations; nothing outside daemon/store knows it is SQLite.
export type SqlValue = number | bigint | string | Uint8Array | null;
export type SqlParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

/** Synchronous statement access, used by reads and inside a write callback. */
export interface Db {
  run(sql: string, params?: SqlParams): RunResult;
  get<T extends object>(sql: string, params?: SqlParams): T | undefined;
  all<T extends object>(sql: string, params?: SqlParams): T[];
}

export interface Migration {
  /** 1, 2, 3 … in order; never renumber a released migration. */
  version: number;
  description: string;
  up: string | ((db: Db) => void);
}

export interface Store extends Db {
  /**
   * Runs fn atomically. The promise resolves only after the data is durable (committed with the
   * configured synchronous level). Writes issued in the same event-loop turn share one commit.
   */
  write<T>(fn: (db: Db) => T): Promise<T>;
  /** Applies the component's pending migrations in one transaction each. */
  migrate(component: string, migrations: readonly Migration[]): void;
  /** Commits pending writes and closes the file. */
  close(): void;
  readonly path: string;
}
