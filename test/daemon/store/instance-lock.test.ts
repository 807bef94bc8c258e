// InstanceLock: one brain per $SVC_HOME, checked across real processes. A pid file whose process is
// gone, or whose pid now belongs to a process started at another time, is stale and taken over; only
// the holder may clear the `<db>.lock` directories a killed brain leaves (ARCHITECTURE.md, Storage).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InstanceLock, InstanceLockedError, lockOwner, readLock } from '../../../daemon/store/instance-lock';
import { CHILD_ARGS, CHILD_ROLE, parentLines, report, spawnSelf } from './child-process';
import { tempDir } from './temp-db';

const SELF = import.meta.filename;

/** /proc/<pid>/stat field 22, the same clock the lock records. */
function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

/** Child role: wait for "go", try to take the lock, report, hold it until "release". */
async function contender(home: string): Promise<void> {
  const input = parentLines();
  report({ ready: true });
  await input.next();
  const lock = new InstanceLock(home);
  try {
    report({ acquired: true, tookOver: lock.acquire() });
  } catch (err) {
    if (!(err instanceof InstanceLockedError)) throw err;
    report({ acquired: false, owner: err.pid });
    process.exit(0);
  }
  await input.next();
  lock.release();
  report({ released: true });
  process.exit(0);
}

if (CHILD_ROLE === 'contender') {
  await contender(CHILD_ARGS[0]!);
} else {
  registerTests();
}

function registerTests(): void {
  test('acquire records pid and start time; release removes the file', (t) => {
    const home = tempDir(t);
    const lock = new InstanceLock(home);
    assert.equal(lock.acquire(), false);
    assert.deepEqual(readLock(lock.file), { pid: process.pid, start: startTime(process.pid) });
    assert.equal(lockOwner(home), process.pid);
    lock.release();
    assert.equal(existsSync(lock.file), false);
    assert.equal(lockOwner(home), null);
    lock.release();
  });

  test('a second acquire in another process fails while the first lives, and succeeds after release', async (t) => {
    const home = tempDir(t);
    const holder = spawnSelf(SELF, 'contender', [home]);
    t.after(() => holder.kill());
    await holder.next();
    holder.send('go');
    assert.deepEqual(await holder.next(), { acquired: true, tookOver: false });

    const mine = new InstanceLock(home);
    assert.throws(() => mine.acquire(), (err: unknown) => err instanceof InstanceLockedError && err.pid === holder.pid && err.message.includes(home));
    assert.equal(lockOwner(home), holder.pid);

    const second = spawnSelf(SELF, 'contender', [home]);
    t.after(() => second.kill());
    await second.next();
    second.send('go');
    assert.deepEqual(await second.next(), { acquired: false, owner: holder.pid });

    holder.send('release');
    assert.deepEqual(await holder.next(), { released: true });
    assert.equal(mine.acquire(), false, 'a released lock is free, not stale');
    mine.release();
  });

  test('the pid file of a killed holder is stale and taken over', async (t) => {
    const home = tempDir(t);
    const holder = spawnSelf(SELF, 'contender', [home]);
    await holder.next();
    holder.send('go');
    await holder.next();
    await holder.kill('SIGKILL');
    assert.equal(readLock(join(home, 'brain.pid'))?.pid, holder.pid, 'kill -9 leaves the pid file behind');
    assert.equal(lockOwner(home), null);
    const lock = new InstanceLock(home);
    t.after(() => lock.release());
    assert.equal(lock.acquire(), true);
    assert.equal(readLock(lock.file)?.pid, process.pid);
  });

  test('a live pid started at another time than recorded is a reused pid: stale', async (t) => {
    const home = tempDir(t);
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    t.after(() => other.kill('SIGKILL'));
    await new Promise((resolve) => other.once('spawn', resolve));
    const file = join(home, 'brain.pid');
    const lock = new InstanceLock(home);

    writeFileSync(file, `${other.pid}\n${startTime(other.pid!)}\n`);
    assert.throws(() => lock.acquire(), InstanceLockedError, 'same pid and start time: that brain still runs');
    assert.equal(lockOwner(home), other.pid);

    writeFileSync(file, `${other.pid}\n1\n`);
    assert.equal(lockOwner(home), null);
    assert.equal(lock.acquire(), true);
    assert.equal(readLock(file)?.pid, process.pid);
    lock.release();
  });

  test('an unreadable or foreign pid file is taken over', (t) => {
    const home = tempDir(t);
    const file = join(home, 'brain.pid');
    for (const content of ['', 'garbage\n', '-4\n', `${process.pid}\n0\n`]) {
      writeFileSync(file, content);
      const lock = new InstanceLock(home);
      assert.equal(lock.acquire(), true, JSON.stringify(content));
      lock.release();
    }
  });

  test('a takeover directory abandoned by a starter killed mid-takeover does not block forever', (t) => {
    const home = tempDir(t);
    writeFileSync(join(home, 'brain.pid'), '999999999\n1\n');
    const takeover = join(home, 'brain.pid.takeover');
    mkdirSync(takeover);
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(takeover, longAgo, longAgo);
    const lock = new InstanceLock(home);
    t.after(() => lock.release());
    assert.equal(lock.acquire(), true);
    assert.ok(!existsSync(takeover));
    assert.deepEqual(readdirSync(home), ['brain.pid'], 'no temporary files are left behind');
  });

  test('clearStaleDatabaseLocks needs the lock, then removes only <name>.db.lock directories', (t) => {
    const home = tempDir(t);
    for (const dir of ['brain.db.lock', 'checkpoints.db.lock', 'other.lock', 'db.lock.d']) mkdirSync(join(home, dir));
    writeFileSync(join(home, 'brain.db'), '');
    const lock = new InstanceLock(home);
    assert.throws(() => lock.clearStaleDatabaseLocks(), /needs the instance lock/);
    assert.ok(existsSync(join(home, 'brain.db.lock')));
    lock.acquire();
    t.after(() => lock.release());
    assert.deepEqual(lock.clearStaleDatabaseLocks().sort(), ['brain.db.lock', 'checkpoints.db.lock']);
    for (const kept of ['other.lock', 'db.lock.d', 'brain.db']) assert.ok(existsSync(join(home, kept)), kept);
    assert.ok(!existsSync(join(home, 'brain.db.lock')));
  });

  test('when several processes race to take over one stale lock, exactly one wins', async (t) => {
    for (let round = 0; round < 6; round++) {
      const home = tempDir(t);
      writeFileSync(join(home, 'brain.pid'), '999999999\n1\n'); // no such pid: stale
      const contenders = Array.from({ length: 4 }, () => spawnSelf(SELF, 'contender', [home]));
      t.after(() => Promise.all(contenders.map((c) => c.kill())));
      await Promise.all(contenders.map((c) => c.next()));
      for (const c of contenders) c.send('go');
      const results = await Promise.all(contenders.map((c) => c.next<{ acquired: boolean }>()));
      const winners = contenders.filter((_, i) => results[i]!.acquired);
      assert.equal(winners.length, 1, `round ${round}: ${JSON.stringify(results)}`);
      assert.equal(readLock(join(home, 'brain.pid'))?.pid, winners[0]!.pid);
      await Promise.all(contenders.map((c) => c.kill()));
    }
  });
}

/** /proc/<pid>/stat field 3: the process state (R, S, Z, ...). */
function procState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * A real zombie, as a killed brain whose parent does not reap it: sh starts a child, then execs sleep,
 * which never waits for children. The child is killed; it stays unreaped (state Z) until its parent
 * ends. Resolves with the zombie's pid once the kernel shows it as Z, and with the parent to kill.
 */
async function makeZombie(): Promise<{ zombie: number; parent: ReturnType<typeof spawn> }> {
  const parent = spawn('sh', ['-c', 'sleep 600 & echo $!; exec sleep 600'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const zombie = await new Promise<number>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  // Kill the child only once sh has become sleep: sh itself might still reap it.
  const execd = (): boolean => readFileSync(`/proc/${parent.pid}/cmdline`, 'utf8').startsWith('sleep\0');
  for (let i = 0; i < 2000 && !execd(); i++) await new Promise((r) => setTimeout(r, 5));
  process.kill(zombie, 'SIGKILL');
  for (let i = 0; i < 2000 && procState(zombie) !== 'Z'; i++) await new Promise((r) => setTimeout(r, 5));
  return { zombie, parent };
}

void test('a zombie brain (killed, not reaped) holds nothing: its lock is taken over (issue 8 §5)', async (t) => {
  const { zombie, parent } = await makeZombie();
  t.after(() => parent.kill('SIGKILL'));
  assert.equal(procState(zombie), 'Z', 'the child is a zombie');
  process.kill(zombie, 0); // signal 0 still reaches a zombie: this alone would call it alive
  const home = tempDir(t);
  writeFileSync(join(home, 'brain.pid'), `${zombie}\n${startTime(zombie)}\n`);
  assert.equal(lockOwner(home), null);
  const lock = new InstanceLock(home);
  assert.equal(lock.acquire(), true, 'took over the zombie lock');
  assert.equal(readLock(lock.file)?.pid, process.pid);
  lock.release();
});

void test('the pid file is private (0600) whatever the umask', (t) => {
  const old = process.umask(0);
  t.after(() => process.umask(old));
  const home = tempDir(t);
  const lock = new InstanceLock(home);
  lock.acquire();
  t.after(() => lock.release());
  assert.equal(statSync(lock.file).mode & 0o777, 0o600);
});
