// One brain per $SVC_HOME. node-sqlite3-wasm locks a database with a `<db>.lock` directory that a
// killed process leaves behind (ARCHITECTURE.md, Storage); only a process that holds this lock may
// conclude the old owner is dead and clear those directories.
//
// The pid file records the pid and the process start time (/proc/<pid>/stat field 22), so a pid that
// the kernel reused for an unrelated process is recognised as stale.
import { closeSync, existsSync, openSync, readFileSync, readdirSync, rmSync, unlinkSync, writeSync, fsyncSync } from 'node:fs';
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

function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses; fields resume after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null; // no such process, or no procfs (not Linux)
  }
}

function isAlive(pid: number, recordedStart: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = startTime(pid);
  return now === null || recordedStart === undefined || recordedStart === '' || now === recordedStart;
}

export interface LockInfo {
  pid: number;
  start?: string;
}

export function readLock(file: string): LockInfo | null {
  try {
    const [pid, start] = readFileSync(file, 'utf8').trim().split('\n');
    const n = Number(pid);
    return Number.isInteger(n) && n > 0 ? { pid: n, ...(start ? { start } : {}) } : null;
  } catch {
    return null;
  }
}

/** Pid of the live brain holding $SVC_HOME, or null. */
export function lockOwner(home: string): number | null {
  const info = readLock(join(home, 'brain.pid'));
  return info && isAlive(info.pid, info.start) ? info.pid : null;
}

export class InstanceLock {
  private held = false;
  readonly file: string;

  constructor(readonly home: string) {
    this.file = join(home, 'brain.pid');
  }

  /** Takes the lock or throws InstanceLockedError. Returns true when a stale lock was taken over. */
  acquire(): boolean {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = openSync(this.file, 'wx', 0o644);
        writeSync(fd, `${process.pid}\n${startTime(process.pid) ?? ''}\n`);
        fsyncSync(fd);
        closeSync(fd);
        this.held = true;
        return attempt > 0;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const info = readLock(this.file);
      if (info && info.pid !== process.pid && isAlive(info.pid, info.start)) throw new InstanceLockedError(info.pid, this.home);
      rmSync(this.file, { force: true });
    }
    throw new Error(`could not take ${this.file}`);
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
