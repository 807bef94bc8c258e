// The checkpoint index's lock file: taken atomically with the holder's pid and start time, refused
// while that process lives, taken over when it is dead, reused or unreadable, and never nested.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointLock } from '../../../daemon/files/checkpoint-lock';
import { procStat } from '../../../daemon/store/instance-lock';

function lockIn(t: { after(fn: () => unknown): void }): CheckpointLock {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-checkpoint-lock-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return new CheckpointLock(join(dir, 'index.lock'));
}

function liveProcess(t: { after(fn: () => unknown): void }): number {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  return child.pid!;
}

void test('taken with the pid and start time, released by removing the file; nesting is a bug', (t) => {
  const lock = lockIn(t);
  assert.equal(lock.tryAcquire(), true);
  assert.deepEqual(readFileSync(lock.file, 'utf8').split('\n').slice(0, 2), [String(process.pid), procStat(process.pid)?.start ?? '']);
  assert.throws(() => new CheckpointLock(lock.file).tryAcquire(), /nested use/);
  lock.release();
  assert.ok(!existsSync(lock.file));
  lock.release(); // a second release is a no-op
  assert.equal(lock.tryAcquire(), true);
  lock.release();
});

void test('refused while a live process holds it, taken over once it is dead', async (t) => {
  const lock = lockIn(t);
  const pid = liveProcess(t);
  writeFileSync(lock.file, `${pid}\n${procStat(pid)?.start ?? ''}\n`);
  assert.equal(lock.tryAcquire(), false);
  assert.equal(lock.holder(), pid);
  process.kill(pid, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 50)); // reaped by the child handle; a zombie counts as dead anyway
  assert.equal(lock.tryAcquire(), true);
  assert.equal(readFileSync(lock.file, 'utf8').split('\n')[0], String(process.pid));
  lock.release();
});

void test('a stale file is taken over: a reused pid (other start time), unreadable content, this pid left by a crash', (t) => {
  const lock = lockIn(t);
  const pid = liveProcess(t);
  for (const content of [`${pid}\n1\n`, 'garbage', '', `${process.pid}\n${procStat(process.pid)?.start ?? ''}\n`]) {
    writeFileSync(lock.file, content);
    assert.equal(lock.tryAcquire(), true, JSON.stringify(content));
    lock.release();
  }
});

void test('a takeover directory left by a killed process is removed after a while; a fresh one makes the caller retry', (t) => {
  const lock = lockIn(t);
  writeFileSync(lock.file, 'garbage');
  mkdirSync(`${lock.file}.takeover`);
  assert.equal(lock.tryAcquire(), false, 'someone is taking over right now');
  const old = new Date(Date.now() - 10_000);
  utimesSync(`${lock.file}.takeover`, old, old);
  assert.equal(lock.tryAcquire(), true);
  lock.release();
});
