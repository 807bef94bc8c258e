// The cooperative lock of the checkpoint index (docs/files.md, Checkpoints). Two processes use
// $SVC_HOME/checkpoints/index.db: the brain, which records, and `svc checkpoints`, which reads and
// reverts whether the brain runs or not. node-sqlite3-wasm cannot share a database safely between
// them: its `<db>.lock` directory is left behind by a killed process, and the store plays a leftover
// journal back itself before opening (daemon/store/hot-journal.ts) — done while the other process is
// mid-transaction, that would roll back the other's live transaction (docs/storage.md).
//
// So index.db is only ever opened by the holder of this lock, for one transaction, and closed before
// the lock is released: whoever holds it knows that nobody else has the database open, so a
// `index.db.lock` directory or a journal found then was left by a dead holder and is safe to clear
// and play back. The lock file holds the holder's pid and process start time, created atomically
// (written privately, then link()ed into place, never seen empty); a holder that is no longer running
// (or whose pid the kernel reused) is stale. Replacing a stale file is serialised through a
// `.takeover` directory, as the brain's instance lock does (daemon/store/instance-lock.ts).
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { isAlive, procStat } from '../store/instance-lock';

/** A takeover directory this old was left by a process killed in the microseconds it is held. */
const TAKEOVER_ABANDONED_MS = 2000;

export class CheckpointLockBusyError extends Error {
  constructor(
    readonly file: string,
    readonly pid: number | null,
  ) {
    super(`the checkpoint index is busy: ${file} is held${pid === null ? '' : ` by pid ${pid}`}; try again`);
    this.name = 'CheckpointLockBusyError';
  }
}

function readContent(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function holderOf(content: string): { pid: number; start?: string } | null {
  const [pid, start] = content.trim().split('\n');
  const n = Number(pid);
  return Number.isInteger(n) && n > 0 ? { pid: n, ...(start ? { start } : {}) } : null;
}

/** Lock files held by this process: one holding its own pid that is not here was left by a bug or a crash. */
const heldHere = new Set<string>();

export class CheckpointLock {
  private readonly takeoverDir: string;

  constructor(readonly file: string) {
    this.takeoverDir = `${file}.takeover`;
  }

  /** Takes the lock if it is free or stale; false while a live process holds it. Never waits. */
  tryAcquire(): boolean {
    if (heldHere.has(this.file)) throw new Error(`${this.file} is already held by this process (nested use of the checkpoint index)`);
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.create()) {
        heldHere.add(this.file);
        return true;
      }
      const content = readContent(this.file);
      if (content === null) continue; // released meanwhile
      const holder = holderOf(content);
      if (holder && holder.pid !== process.pid && isAlive(holder.pid, holder.start)) return false;
      if (!this.removeStale(content)) return false; // another process is taking over
    }
    return false;
  }

  /** The pid recorded in the lock file, for error messages. */
  holder(): number | null {
    const content = readContent(this.file);
    return content === null ? null : (holderOf(content)?.pid ?? null);
  }

  release(): void {
    if (!heldHere.delete(this.file)) return;
    unlinkSync(this.file);
  }

  private create(): boolean {
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${process.pid}\n${procStat(process.pid)?.start ?? ''}\n`, { mode: 0o600 });
    try {
      linkSync(tmp, this.file);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    } finally {
      unlinkSync(tmp);
    }
  }

  /**
   * Removes the lock file if it still reads `stale`, under the takeover directory. True: try again;
   * false: another process is taking over right now.
   */
  private removeStale(stale: string): boolean {
    try {
      mkdirSync(this.takeoverDir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const since = statSync(this.takeoverDir, { throwIfNoEntry: false })?.mtimeMs;
      if (since === undefined) return true; // finished meanwhile: try again
      if (Date.now() - since <= TAKEOVER_ABANDONED_MS) return false;
      rmSync(this.takeoverDir, { recursive: true, force: true });
      return true; // abandoned: try again
    }
    try {
      if (readContent(this.file) !== stale) return true; // replaced meanwhile: try again
      rmSync(this.file, { force: true });
      return true;
    } finally {
      rmSync(this.takeoverDir, { recursive: true, force: true });
    }
  }
}
