// One brain per $SVC_HOME. node-sqlite3-wasm locks a database with a `<db>.lock` directory that a
// killed process leaves behind (ARCHITECTURE.md, Storage); only a process that holds this lock may
// conclude the old owner is dead and clear those directories.
//
// The pid file records the pid and the process start time (/proc/<pid>/stat field 22), so a pid that
// the kernel reused for an unrelated process is recognised as stale.
//
// Creating the pid file ('wx') is atomic, but replacing a stale one is not: two starters that both saw
// the same stale file could each remove it, and the slower one would delete the faster one's fresh
// lock (measured: 2 of 4 racing processes "won"; test/daemon/store/instance-lock.test.ts). So only the
// process holding the `brain.pid.takeover` directory (mkdir is atomic) may remove a pid file, after
// re-reading it there. A takeover directory older than TAKEOVER_ABANDONED_MS belonged to a starter
// killed mid-takeover (a window of microseconds) and is removed.
//
// A killed brain that its parent has not reaped yet is a zombie (state Z, or X while being reaped):
// signal 0 still reaches it, but it holds nothing and never runs again, so it counts as dead (issue 8
// §5) — otherwise systemd's restart would exit 75 (home in use), which the unit never retries.
import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class InstanceLockedError extends Error {
  constructor(
    readonly pid: number,
    readonly home: string,
  ) {
    super(`another brain (pid ${pid}) is already running on ${home}`);
    this.name = 'InstanceLockedError';
  }
}

interface ProcStat {
  /** Field 3: R, S, D, Z (zombie), X (dead), ... */
  state: string;
  /** Field 22: start time in clock ticks since boot. */
  start: string | null;
}

export function procStat(pid: number): ProcStat | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // No such process, no procfs (not Linux), or another user's process under hidepid: unknown.
    if (code === 'ENOENT' || code === 'ESRCH' || code === 'EACCES' || code === 'EPERM') return null;
    throw err;
  }
  // The command name (field 2) may contain spaces and parentheses; fields resume after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', start: fields[19] ?? null };
}

const startTime = (pid: number): string | null => procStat(pid)?.start ?? null;

export function isAlive(pid: number, recordedStart: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(pid);
  if (stat === null) return true; // signal 0 reached it; without procfs nothing more is known
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return stat.start === null || recordedStart === undefined || recordedStart === '' || stat.start === recordedStart;
}

export interface LockInfo {
  pid: number;
  start?: string;
}

/** The pid file's text, or null when there is none. */
function readContent(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function parseLock(content: string | null): LockInfo | null {
  const [pid, start] = (content ?? '').trim().split('\n');
  const n = Number(pid);
  return Number.isInteger(n) && n > 0 ? { pid: n, ...(start ? { start } : {}) } : null;
}

export function readLock(file: string): LockInfo | null {
  return parseLock(readContent(file));
}

/** Pid of the live brain holding $SVC_HOME, or null. */
export function lockOwner(home: string): number | null {
  const info = readLock(join(home, 'brain.pid'));
  return info && isAlive(info.pid, info.start) ? info.pid : null;
}

const TAKEOVER_ABANDONED_MS = 2000;
const TAKEOVER_ATTEMPTS = 400;

const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

export class InstanceLock {
  private held = false;
  readonly file: string;
  private readonly takeoverDir: string;

  constructor(readonly home: string) {
    this.file = join(home, 'brain.pid');
    this.takeoverDir = `${this.file}.takeover`;
  }

  /** Takes the lock or throws InstanceLockedError. Returns true when a stale lock was taken over. */
  acquire(): boolean {
    let tookOver = false;
    for (let attempt = 0; attempt < TAKEOVER_ATTEMPTS; attempt++) {
      if (this.create()) {
        this.held = true;
        return tookOver;
      }
      const content = readContent(this.file);
      if (content === null) continue; // removed meanwhile: try to create it again
      const info = parseLock(content);
      if (info && info.pid !== process.pid && isAlive(info.pid, info.start)) throw new InstanceLockedError(info.pid, this.home);
      if (this.removeStale(content)) tookOver = true;
      else sleepSync(5); // another starter is taking over; see who wins
    }
    throw new Error(`could not take ${this.file}: another process keeps taking over ${this.takeoverDir}`);
  }

  /**
   * Atomically creates the complete pid file; false when one exists. The content is written to a
   * private file first and linked into place, so nobody ever reads a created-but-empty pid file
   * (which would look stale).
   */
  private create(): boolean {
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${process.pid}\n${startTime(process.pid) ?? ''}\n`, { mode: 0o600, flush: true });
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
   * Removes the pid file if it still reads exactly `stale`, under the takeover directory; false when
   * another starter holds the directory or got there first. While the file exists nobody can create
   * one, and only the takeover holder removes a file it does not own, so the check and the removal
   * cannot be separated by another starter.
   */
  private removeStale(stale: string): boolean {
    try {
      mkdirSync(this.takeoverDir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const since = statSync(this.takeoverDir, { throwIfNoEntry: false })?.mtimeMs;
      if (since !== undefined && Date.now() - since > TAKEOVER_ABANDONED_MS) rmSync(this.takeoverDir, { recursive: true, force: true });
      return false;
    }
    try {
      // Re-read under the takeover lock: a starter that got here first may have replaced it already.
      if (readContent(this.file) !== stale) return false;
      rmSync(this.file, { force: true });
      return true;
    } finally {
      rmSync(this.takeoverDir, { recursive: true, force: true });
    }
  }

  /** With the lock held, removes `<db>.lock` directories left by a killed brain. */
  clearStaleDatabaseLocks(): string[] {
    if (!this.held) throw new Error('clearStaleDatabaseLocks needs the instance lock');
    const cleared: string[] = [];
    for (const name of readdirSync(this.home)) {
      if (!name.endsWith('.db.lock')) continue;
      rmSync(join(this.home, name), { recursive: true, force: true });
      cleared.push(name);
    }
    return cleared;
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    const info = readLock(this.file);
    if (info?.pid === process.pid && existsSync(this.file)) unlinkSync(this.file);
  }
}
