// Shared fixtures for the store tests: a fresh directory per test, removed afterwards, and a reader
// for the SQLite header's file change counter, which a rollback-journal database increments once per
// committed write transaction (https://www.sqlite.org/fileformat2.html#file_change_counter). Counting
// commits that way observes group commit from outside the store, without instrumenting it.
import { mkdtempSync, openSync, readSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import sqlite from 'node-sqlite3-wasm';

export function tempDir(t: TestContext, prefix = 'svc-store-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function commitCounter(dbFile: string): number {
  const fd = openSync(dbFile, 'r');
  try {
    const header = Buffer.alloc(4);
    readSync(fd, header, 0, 4, 24);
    return header.readUInt32BE(0);
  } finally {
    closeSync(fd);
  }
}

/** Reads through a second, independent connection: it sees only what was committed. */
export function readCommitted<T extends object>(dbFile: string, sql: string): T[] {
  const db = new sqlite.Database(dbFile, { fileMustExist: true });
  try {
    return db.all(sql) as T[];
  } finally {
    db.close();
  }
}

/** Lets the event loop run one full turn, so a pending group commit happens. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
