// index.db shared by two processes (docs/files.md, Checkpoints): a separate process records
// checkpoints in a tight loop the way the brain does (useAsync), while this process reads, plans and
// undoes the way `svc checkpoints` does (use). Then the writer is SIGKILLed at random points, over and
// over, and the next opener must clear what it left (its lock, the `.lock` directory, a hot journal):
// every change the writer saw committed is still there, and integrity_check is ok. A last writer stops
// inside a transaction that has written into the file, so one kill surely leaves a journal to roll back.
//
// This file is also the writer: started with `--checkpoint-writer <home> <tree> [stall]` it records
// forever and prints `committed <turn>` after each turn's last commit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { sha256 } from '../../../daemon/files/checkpoint-blobs';
import { CheckpointIndex, type IndexRecovery } from '../../../daemon/files/checkpoint-index';
import { CheckpointLockBusyError } from '../../../daemon/files/checkpoint-lock';
import { showTurn, undoTurn } from '../../../daemon/files/checkpoint-revert';
import { Checkpoints, checkpointPaths } from '../../../daemon/files/checkpoints';

const WRITER_FLAG = '--checkpoint-writer';

async function writer(home: string, tree: string, stall: boolean): Promise<void> {
  const checkpoints = new Checkpoints({ home, clock: { now: () => Date.now() }, logger: pino({ level: 'silent' }), limits: { keepTurns: 1e9, keepMs: 1e12 }, waitMs: 120_000 });
  const ctx = (turnId: string) => ({ sessionId: `writer-${process.pid}`, turnId });
  for (let i = 0; ; i++) {
    if (stall && i === 3) {
      // Stops inside a transaction that has spilled pages into index.db (a 4 MiB row is more than
      // SQLite's page cache), holding the lock: the kill that follows leaves all of it behind.
      await checkpoints.index.useAsync((db) => {
        db.insert({ turn_id: 'never-committed', session_id: 's', at: '', tool: 'run_command', kind: 'command', path: tree, to_path: null, entry: 'directory', prior_blob: null, prior_mode: null, revertible: 0, note: 'x'.repeat(4 * 1024 * 1024) });
        process.stdout.write('stalled\n'); // a pipe is written synchronously on Linux
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
      });
    }
    const turn = `${process.pid}-${i}`;
    const file = join(tree, `f${i % 4}.txt`);
    const content = `${turn} `.repeat(200 + (i % 7) * 300);
    const pending = await checkpoints.before(ctx(turn), { tool: 'write_file', kind: 'write', path: file });
    writeFileSync(file, content);
    await pending.done(sha256(content));
    // A command row with a long argv: a transaction of several pages, so a kill often leaves a journal.
    const command = await checkpoints.command(ctx(turn), Array.from({ length: 6 }, (_, k) => `${k}:${turn}:`.repeat(500)), tree);
    await command.done(null);
    process.stdout.write(`committed ${turn}\n`);
  }
}

const argv = process.argv;
const writerAt = argv.indexOf(WRITER_FLAG);
if (writerAt !== -1) {
  void writer(argv[writerAt + 1]!, argv[writerAt + 2]!, argv[writerAt + 3] === 'stall');
} else {
  void test('a tight-loop writer and a reader/undoer share index.db, and kill -9 of the writer never loses a committed row', async (t) => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'svc-checkpoint-index-')));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const home = join(root, 'home');
    const tree = join(root, 'tree');
    mkdirSync(home);
    mkdirSync(tree);
    const recoveries: IndexRecovery[] = [];
    const dir = checkpointPaths(home).dir;
    const index = new CheckpointIndex(dir, { onRecovery: (r) => recoveries.push(r), waitMs: 60_000 });
    const blobs = new Checkpoints({ home, clock: { now: () => Date.now() }, logger: pino({ level: 'silent' }) }).blobs;
    const committed: string[] = [];
    let undos = 0;
    let reads = 0;
    const ROUNDS = 10;
    for (let round = 0; round < ROUNDS; round++) {
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), WRITER_FLAG, home, tree], { stdio: ['ignore', 'pipe', 'inherit'] });
      const target = committed.length + 5 + Math.floor(Math.random() * 25);
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await untilCommitted(child, committed, target, () => {
        // The CLI's side, as often as the event loop lets it: list, plan, undo a committed turn.
        index.use((db) => db.turns(20));
        const turn = committed[Math.floor(Math.random() * committed.length)];
        if (turn !== undefined) {
          index.use((db) => showTurn(db, turn));
          undoTurn(index, blobs, turn, false);
          undos++;
        }
        reads++;
      });
      // A random point of the loop: before, inside or after a transaction.
      await new Promise((r) => setTimeout(r, Math.random() * 8));
      child.kill('SIGKILL');
      await exited;
      const check = index.use((db) => ({ integrity: db.integrityCheck(), turns: new Map(db.turns(1e9).map((x) => [x.turn_id, x])) }));
      assert.equal(check.integrity, 'ok');
      for (const turn of committed) assert.equal(check.turns.get(turn)?.changes, 2, `turn ${turn} was committed (both rows) and must still be there`);
    }
    assert.ok(committed.length >= ROUNDS * 5);
    assert.ok(undos > 0 && reads > 0);
    const random = recoveries.length;

    // And one kill certain to land inside a transaction that has written into index.db.
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), WRITER_FLAG, home, tree, 'stall'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => d.toString().includes('stalled') && resolve()));
    assert.equal(existsSync(join(dir, 'index.db-journal')) && existsSync(join(dir, 'index.db.lock')) && existsSync(join(dir, 'index.lock')), true);
    child.kill('SIGKILL');
    await exited;
    const after = index.use((db) => ({ integrity: db.integrityCheck(), turns: new Set(db.turns(1e9).map((x) => x.turn_id)) }));
    assert.equal(recoveries.length, random + 1);
    assert.equal(recoveries.at(-1)?.lockDirCleared, true);
    assert.equal(recoveries.at(-1)?.journal.state, 'rolled-back', JSON.stringify(recoveries.at(-1)));
    assert.equal(after.integrity, 'ok');
    assert.ok(!after.turns.has('never-committed'), 'the uncommitted row was rolled back');
    for (const turn of committed) assert.ok(after.turns.has(turn), turn);
    t.diagnostic(`${committed.length} turns committed, ${reads} reads and ${undos} undos alongside, ${recoveries.length} recoveries: ${JSON.stringify(recoveries.map((r) => r.journal.state))}`);
  });

  void test('the lock of a live process is waited for, then reported busy; a dead holder is taken over', async (t) => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'svc-checkpoint-index-')));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const index = new CheckpointIndex(root, { waitMs: 50 });
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    t.after(() => sleeper.kill('SIGKILL'));
    writeFileSync(join(root, 'index.lock'), `${sleeper.pid}\n`);
    assert.throws(() => index.use((db) => db.turns(1)), (e: unknown) => e instanceof CheckpointLockBusyError && e.pid === sleeper.pid);
    await assert.rejects(index.useAsync((db) => db.turns(1)), CheckpointLockBusyError);
    sleeper.kill('SIGKILL');
    await new Promise((r) => sleeper.once('exit', r));
    assert.deepEqual(index.use((db) => db.turns(1)), []);
    assert.ok(!existsSync(join(root, 'index.lock')), 'released after use');
  });
}

/** Waits (on the writer's output events) until `target` turns are committed, running `between` meanwhile. */
function untilCommitted(child: ChildProcess, committed: string[], target: number, between: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    let stopped = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) if (line.startsWith('committed ')) committed.push(line.slice('committed '.length));
      if (committed.length >= target && !stopped) {
        stopped = true;
        resolve();
      }
    });
    child.once('exit', (code, signal) => {
      if (!stopped) reject(new Error(`writer exited early (${code ?? signal})`));
    });
    const loop = (): void => {
      if (stopped) return;
      between();
      setImmediate(loop);
    };
    setImmediate(loop);
  });
}
