// Hot-journal rollback, done here because node-sqlite3-wasm never does it.
//
// Its VFS locks with a `<db>.lock` directory (dot-file locking) and answers xCheckReservedLock by
// testing whether that directory exists. When a connection opens a database it first takes its own
// SHARED lock — creating the directory — and then asks whether a journal is hot; the directory it just
// made reads as another process's RESERVED lock, so SQLite concludes the journal belongs to a live
// writer and uses the database file as it is. After kill -9 or a power cut in the middle of a
// transaction, that file holds pages of the transaction that never committed (measured: 2976 of 3000
// rows of an interrupted UPDATE visible; test/daemon/store/hot-journal.test.ts).
//
// So before the store opens a database it plays a leftover journal back itself, exactly as SQLite's
// pager_playback() does for a hot journal (https://www.sqlite.org/fileformat2.html#the_rollback_journal,
// https://www.sqlite.org/atomiccommit.html#section_4_2): truncate to the original size recorded in the
// first header, write back every checksummed page record, stop at the first torn or invalid one, fsync,
// delete the journal. The caller must make sure no other process uses the database (the brain holds
// the instance lock); the `<db>.lock` directory is taken for the duration so node-sqlite3-wasm
// connections in other processes wait instead of reading a half-restored file.
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readSync, rmdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

const MAGIC = Buffer.from('d9d505f920a163d7', 'hex');
const PENDING_BYTE = 0x40000000;
const NO_SYNC_NREC = 0xffffffff;

export type JournalRecovery =
  | { state: 'none' }
  | { state: 'locked' }
  | { state: 'discarded'; reason: string }
  | { state: 'rolled-back'; pages: number; originalPages: number };

export class JournalError extends Error {}

interface Header {
  nRec: number;
  cksumInit: number;
  originalPages: number;
}

const isPowerOfTwo = (n: number): boolean => n > 0 && (n & (n - 1)) === 0;

function readAt(fd: number, length: number, position: number): Buffer | null {
  const buf = Buffer.alloc(length);
  return readSync(fd, buf, 0, length, position) === length ? buf : null;
}

/** SQLite's pager_cksum: the nonce plus every 200th byte, counted back from the page end. */
export function pageChecksum(cksumInit: number, page: Buffer): number {
  let sum = cksumInit;
  for (let i = page.length - 200; i > 0; i -= 200) sum = (sum + page[i]!) >>> 0;
  return sum;
}

function readHeader(fd: number, offset: number, size: number, sectorSize: number): Header | null {
  if (offset + sectorSize > size) return null;
  const h = readAt(fd, 20, offset);
  if (!h || !h.subarray(0, 8).equals(MAGIC)) return null;
  return { nRec: h.readUInt32BE(8), cksumInit: h.readUInt32BE(12), originalPages: h.readUInt32BE(16) };
}

/** Plays every page record back; returns how many were written. */
function playback(db: number, jfd: number, size: number): { pages: number; originalPages: number } | { invalid: string } {
  const first = readAt(jfd, 28, 0);
  if (!first?.subarray(0, 8).equals(MAGIC)) return { invalid: 'no journal header (the transaction never reached the database file)' };
  const sectorSize = first.readUInt32BE(20);
  const pageSize = first.readUInt32BE(24);
  if (pageSize < 512 || pageSize > 65536 || !isPowerOfTwo(pageSize) || sectorSize < 32 || sectorSize > 65536 || !isPowerOfTwo(sectorSize)) {
    return { invalid: 'torn journal header (written but never synced, so the database file was not touched)' };
  }
  const recordSize = pageSize + 8;
  const pendingPage = Math.floor(PENDING_BYTE / pageSize) + 1;
  let offset = 0;
  let originalPages = -1;
  let pages = 0;
  for (;;) {
    const header = readHeader(jfd, offset, size, sectorSize);
    if (!header) break;
    let nRec = header.nRec;
    if (nRec === NO_SYNC_NREC) nRec = Math.floor((size - sectorSize) / recordSize);
    offset += sectorSize;
    if (originalPages < 0) {
      originalPages = header.originalPages;
      truncate(db, originalPages, pageSize);
    }
    for (let r = 0; r < nRec; r++, offset += recordSize) {
      const record = readAt(jfd, recordSize, offset);
      if (!record) return { pages, originalPages }; // torn tail: never synced, never applied
      const pgno = record.readUInt32BE(0);
      const page = record.subarray(4, 4 + pageSize);
      if (pgno === 0 || pgno === pendingPage) return { pages, originalPages };
      if (pgno > originalPages) continue;
      if (pageChecksum(header.cksumInit, page) !== record.readUInt32BE(4 + pageSize)) return { pages, originalPages };
      writeSync(db, page, 0, pageSize, (pgno - 1) * pageSize);
      pages++;
    }
    offset = Math.ceil(offset / sectorSize) * sectorSize;
  }
  return { pages, originalPages: Math.max(originalPages, 0) };
}

/** pager_truncate: back to the original size; a file that shrank is extended with a zero page. */
function truncate(db: number, pages: number, pageSize: number): void {
  const current = fstatSync(db).size;
  const wanted = pages * pageSize;
  if (current > wanted) ftruncateSync(db, wanted);
  else if (current + pageSize <= wanted) writeSync(db, Buffer.alloc(pageSize), 0, pageSize, wanted - pageSize);
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Rolls back `<dbFile>-journal` if one was left behind. A journal with a super-journal (a transaction
 * across ATTACHed databases, which svc never opens) is refused with a JournalError rather than guessed.
 */
export function rollbackHotJournal(dbFile: string): JournalRecovery {
  const journal = `${dbFile}-journal`;
  if (!existsSync(journal)) return { state: 'none' };
  const lockDir = `${dbFile}.lock`;
  try {
    mkdirSync(lockDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { state: 'locked' };
    throw err;
  }
  try {
    return recover(dbFile, journal);
  } finally {
    rmdirSync(lockDir);
  }
}

function recover(dbFile: string, journal: string): JournalRecovery {
  if ((statSync(dbFile, { throwIfNoEntry: false })?.size ?? 0) === 0) {
    // SQLite treats a journal next to an empty or missing database as not hot, and deletes it.
    unlinkSync(journal);
    return { state: 'discarded', reason: 'the database file is empty' };
  }
  const jfd = openSync(journal, 'r');
  let result: ReturnType<typeof playback>;
  try {
    const size = fstatSync(jfd).size;
    const tail = size >= 16 ? readAt(jfd, 8, size - 8) : null;
    if (tail?.equals(MAGIC)) throw new JournalError(`${journal} names a super-journal (multi-database transaction); roll it back with the sqlite3 shell`);
    const db = openSync(dbFile, 'r+');
    try {
      result = playback(db, jfd, size);
      fsyncSync(db);
    } finally {
      closeSync(db);
    }
  } finally {
    closeSync(jfd);
  }
  unlinkSync(journal);
  fsyncDir(dirname(journal));
  return 'invalid' in result ? { state: 'discarded', reason: result.invalid } : { state: 'rolled-back', ...result };
}
