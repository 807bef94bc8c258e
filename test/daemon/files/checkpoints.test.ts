// Checkpoints through the real file tools on real files: what each change records, blobs (private,
// deduplicated), commands as not revertible, retention, and — as a fast-check property — that random
// sequences of write/edit/move/delete over several turns are undone back to the exact prior tree.
import { test } from 'node:test';
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { sha256 } from '../../../daemon/files/checkpoint-blobs';
import { showTurn, undoTurn } from '../../../daemon/files/checkpoint-revert';
import { ToolFailure } from '../../../daemon/kernel/tool';
import { checkpointRig, snapshot, type Rig } from './checkpoint-rig';

const changesOf = (rig: Rig, turn: string) => rig.checkpoints.index.use((db) => db.changes(turn));
const undo = (rig: Rig, turn: string | undefined, force = false) => undoTurn(rig.checkpoints.index, rig.checkpoints.blobs, turn, force);

void test('each file tool records the prior state before it acts and what it left after, grouped by turn', async (t) => {
  const rig = checkpointRig(t);
  const a = join(rig.tree, 'a.txt');
  writeFileSync(a, 'first');
  mkdirSync(join(rig.tree, 'empty'));
  await rig.call('write_file', { path: join(rig.tree, 'new.txt'), content: 'created' });
  await rig.call('edit_file', { path: a, old_text: 'first', new_text: 'second' });
  await rig.call('move_file', { from: a, to: join(rig.tree, 'b.txt') });
  await rig.call('delete_file', { path: join(rig.tree, 'empty') }, 'turn-2');
  const rows = changesOf(rig, 'turn-1');
  assert.deepEqual(
    rows.map((r) => [r.tool, r.kind, r.entry, r.state, r.revertible, r.session_id]),
    [
      ['write_file', 'write', 'absent', 'done', 1, 'session-1'],
      ['edit_file', 'edit', 'file', 'done', 1, 'session-1'],
      ['move_file', 'move', 'file', 'done', 1, 'session-1'],
    ],
  );
  assert.equal(rows[0]!.prior_blob, null);
  assert.equal(rows[0]!.after_hash, sha256('created'));
  assert.equal(rows[1]!.prior_blob, sha256('first'));
  assert.equal(rows[1]!.after_hash, sha256('second'));
  assert.equal(rows[2]!.to_path, join(rig.tree, 'b.txt'));
  assert.equal(rig.checkpoints.blobs.get(rows[1]!.prior_blob).toString(), 'first');
  assert.deepEqual(
    changesOf(rig, 'turn-2').map((r) => [r.kind, r.entry]),
    [['delete', 'directory']],
  );
});

void test('blobs are private, written once per content, and the index is private', async (t) => {
  const rig = checkpointRig(t);
  for (const name of ['x.txt', 'y.txt']) writeFileSync(join(rig.tree, name), 'same content');
  await rig.call('write_file', { path: join(rig.tree, 'x.txt'), content: 'one' });
  await rig.call('write_file', { path: join(rig.tree, 'y.txt'), content: 'two' });
  const blobs = join(rig.home, 'checkpoints', 'blobs');
  assert.deepEqual(readdirSync(blobs), [sha256('same content')]);
  assert.equal(statSync(blobs).mode & 0o777, 0o700);
  assert.equal(statSync(join(rig.home, 'checkpoints')).mode & 0o777, 0o700);
  assert.equal(statSync(join(blobs, sha256('same content'))).mode & 0o777, 0o600);
  assert.equal(statSync(join(rig.home, 'checkpoints', 'index.db')).mode & 0o777, 0o600);
});

void test('a tool that fails before changing anything leaves no row; a command is recorded as not revertible', async (t) => {
  const rig = checkpointRig(t);
  writeFileSync(join(rig.tree, 'a.txt'), 'a');
  await assert.rejects(rig.call('edit_file', { path: join(rig.tree, 'a.txt'), old_text: 'zzz', new_text: 'b' }), ToolFailure);
  await assert.rejects(rig.call('run_command', { argv: ['no-such-program-svc'], cwd: rig.tree }), ToolFailure);
  assert.deepEqual(changesOf(rig, 'turn-1'), []);
  await rig.call('run_command', { argv: ['touch', 'made-by-command'], cwd: rig.tree });
  const [row] = changesOf(rig, 'turn-1');
  assert.equal(row?.kind, 'command');
  assert.equal(row?.revertible, 0);
  assert.equal(row?.note, JSON.stringify(['touch', 'made-by-command']));
  const plan = rig.checkpoints.index.use((db) => showTurn(db, undefined));
  assert.deepEqual(plan?.steps.map((s) => s.status), ['not revertible']);
  const r = undo(rig, undefined);
  assert.equal(r?.refused, false);
  assert.ok(existsSync(join(rig.tree, 'made-by-command')), 'a command is listed, never undone');
});

void test('a hand-edited file is drifted: show and undo change nothing, --force discards the newer content', async (t) => {
  const rig = checkpointRig(t);
  const a = join(rig.tree, 'a.txt');
  writeFileSync(a, 'original');
  chmodSync(a, 0o640);
  await rig.call('edit_file', { path: a, old_text: 'original', new_text: 'by the agent' });
  await rig.call('write_file', { path: join(rig.tree, 'created.txt'), content: 'new' });
  writeFileSync(a, 'by hand');
  const plan = rig.checkpoints.index.use((db) => showTurn(db, undefined));
  assert.deepEqual(plan?.steps.map((s) => s.status), ['revert', 'drifted']);
  const refused = undo(rig, 'turn-1');
  assert.equal(refused?.refused, true);
  assert.equal(readFileSync(a, 'utf8'), 'by hand');
  assert.ok(existsSync(join(rig.tree, 'created.txt')), 'a refused undo changes nothing, not even the clean steps');
  const forced = undo(rig, 'turn-1', true);
  assert.equal(forced?.refused, false);
  assert.equal(readFileSync(a, 'utf8'), 'original');
  assert.equal(statSync(a).mode & 0o777, 0o640);
  assert.ok(!existsSync(join(rig.tree, 'created.txt')));
  const again = undo(rig, 'turn-1');
  assert.deepEqual(again?.plan.steps.map((s) => s.status), ['reverted', 'reverted']);
  assert.deepEqual(again?.applied, []);
});

void test('a file created by the agent and changed since is drifted; a folder in its place is blocked even with --force', async (t) => {
  const rig = checkpointRig(t);
  const c = join(rig.tree, 'c.txt');
  await rig.call('write_file', { path: c, content: 'agent' });
  writeFileSync(c, 'hand');
  assert.equal(undo(rig, undefined)?.refused, true);
  assert.equal(readFileSync(c, 'utf8'), 'hand');
  assert.equal(undo(rig, undefined, true)?.refused, false);
  assert.ok(!existsSync(c));
  await rig.call('write_file', { path: c, content: 'agent' }, 'turn-2');
  unlinkSync(c);
  mkdirSync(c);
  const r = undo(rig, 'turn-2', true);
  assert.deepEqual(r?.skipped.map((s) => s.status), ['blocked']);
  assert.ok(statSync(c).isDirectory(), 'a folder is never removed by a revert');
});

void test('an interrupted change (recorded, never confirmed) is in place when nothing changed and drifted when it did', async (t) => {
  const rig = checkpointRig(t);
  const a = join(rig.tree, 'a.txt');
  writeFileSync(a, 'before');
  await rig.checkpoints.before({ sessionId: 's', turnId: 'cut' }, { tool: 'write_file', kind: 'write', path: a });
  assert.deepEqual(rig.checkpoints.index.use((db) => showTurn(db, 'cut'))?.steps.map((s) => s.status), ['in place']);
  writeFileSync(a, 'after, maybe by the agent');
  assert.deepEqual(rig.checkpoints.index.use((db) => showTurn(db, 'cut'))?.steps.map((s) => s.status), ['drifted']);
  assert.equal(undo(rig, 'cut', true)?.refused, false);
  assert.equal(readFileSync(a, 'utf8'), 'before');
});

void test('deleting a file past the blob cap is recorded as not revertible; moving one is undone by moving back', async (t) => {
  const rig = checkpointRig(t);
  const big = join(rig.tree, 'big.bin');
  writeFileSync(big, Buffer.alloc(16 * 1024 * 1024 + 1, 7));
  await rig.call('move_file', { from: big, to: join(rig.tree, 'moved.bin') });
  await rig.call('delete_file', { path: join(rig.tree, 'moved.bin') }, 'turn-2');
  const blobs = join(rig.home, 'checkpoints', 'blobs');
  assert.ok(!existsSync(blobs) || readdirSync(blobs).length === 0, 'no blob of a file past the cap');
  const plan = rig.checkpoints.index.use((db) => showTurn(db, 'turn-2'));
  assert.equal(plan?.steps[0]?.status, 'not revertible');
  assert.match(plan?.steps[0]?.action ?? '', /larger than the 16777216-byte checkpoint cap/);
  // Put it back by hand, then the move reverts by renaming.
  writeFileSync(join(rig.tree, 'moved.bin'), Buffer.alloc(16 * 1024 * 1024 + 1, 7));
  const moved = rig.checkpoints.index.use((db) => showTurn(db, 'turn-1'));
  assert.equal(moved?.steps[0]?.status, 'blocked', 'a new file (another inode) is not what the agent left, and its content was not kept');
  assert.equal(moved?.steps[0]?.change.revertible, 1);
});

void test('a big file moved and left alone is moved back', async (t) => {
  const rig = checkpointRig(t);
  const big = join(rig.tree, 'big.bin');
  writeFileSync(big, Buffer.alloc(16 * 1024 * 1024 + 1, 3));
  await rig.call('move_file', { from: big, to: join(rig.tree, 'moved.bin') });
  assert.equal(undo(rig, undefined)?.refused, false);
  assert.ok(existsSync(big) && !existsSync(join(rig.tree, 'moved.bin')));
});

void test('retention keeps the newest turns and recent ones, and removes blobs no row references', async (t) => {
  const rig = checkpointRig(t, { keepTurns: 2, keepMs: 24 * 3600 * 1000 });
  const a = join(rig.tree, 'a.txt');
  writeFileSync(a, 'v0');
  for (let i = 1; i <= 3; i++) await rig.call('write_file', { path: a, content: `v${i}` }, `turn-${i}`);
  const turns = () => rig.checkpoints.index.use((db) => db.turns(10)).map((x) => x.turn_id);
  assert.deepEqual(turns(), ['turn-3', 'turn-2', 'turn-1'], 'retention runs before the change of a new turn is recorded');
  await rig.call('write_file', { path: a, content: 'v4' }, 'turn-4');
  assert.deepEqual(turns(), ['turn-4', 'turn-3', 'turn-2']);
  assert.ok(!rig.checkpoints.blobs.has(sha256('v0')), "turn-1's blob went with it");
  assert.ok(rig.checkpoints.blobs.has(sha256('v1')));
  rig.clock.ms += 2 * 24 * 3600 * 1000;
  await rig.call('write_file', { path: a, content: 'v5' }, 'turn-5');
  assert.deepEqual(turns(), ['turn-5']);
});

void test('a busy index fails the change before it is made; a busy index after it leaves the row pending, not the tool failed', async (t) => {
  const rig = checkpointRig(t, {}, 30);
  const a = join(rig.tree, 'a.txt');
  writeFileSync(a, 'prior');
  const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.after(() => holder.kill('SIGKILL'));
  mkdirSync(join(rig.home, 'checkpoints'), { recursive: true });
  const lockFile = join(rig.home, 'checkpoints', 'index.lock');
  writeFileSync(lockFile, `${holder.pid}\n`);
  await assert.rejects(rig.call('write_file', { path: a, content: 'new' }), (e: unknown) => e instanceof ToolFailure && /checkpoint index is busy.*nothing was changed/.test(e.message));
  assert.equal(readFileSync(a, 'utf8'), 'prior');
  unlinkSync(lockFile);
  const pending = await rig.checkpoints.before({ sessionId: 's', turnId: 'busy' }, { tool: 'write_file', kind: 'write', path: a });
  writeFileSync(a, 'new');
  writeFileSync(lockFile, `${holder.pid}\n`);
  await pending.done(sha256('new'));
  unlinkSync(lockFile);
  assert.deepEqual(changesOf(rig, 'busy').map((r) => r.state), ['pending']);
});

type Op =
  | { op: 'write'; name: number; content: string }
  | { op: 'edit'; name: number; content: string }
  | { op: 'move'; name: number; to: number }
  | { op: 'delete'; name: number };

const NAMES = ['a.txt', 'b.txt', 'd/c.txt', 'd', 'e', 'f'];
const text = fc.string({ maxLength: 12 }).filter((s) => !s.includes('\0'));
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('write' as const), name: fc.nat(NAMES.length - 1), content: text }),
  fc.record({ op: fc.constant('edit' as const), name: fc.nat(NAMES.length - 1), content: text }),
  fc.record({ op: fc.constant('move' as const), name: fc.nat(NAMES.length - 1), to: fc.nat(NAMES.length - 1) }),
  fc.record({ op: fc.constant('delete' as const), name: fc.nat(NAMES.length - 1) }),
);

async function apply(rig: Rig, op: Op, turn: string): Promise<void> {
  const path = join(rig.tree, NAMES[op.name]!);
  const calls: Record<Op['op'], () => [string, Record<string, unknown>]> = {
    write: () => ['write_file', { path, content: (op as { content: string }).content }],
    edit: () => {
      const current = existsSync(path) && statSync(path).isFile() ? readFileSync(path, 'utf8') : 'x';
      return ['edit_file', { path, old_text: current === '' ? 'x' : current, new_text: (op as { content: string }).content }];
    },
    move: () => ['move_file', { from: path, to: join(rig.tree, NAMES[(op as { to: number }).to]!) }],
    delete: () => ['delete_file', { path }],
  };
  const [name, args] = calls[op.op]();
  try {
    await rig.call(name, args, turn);
  } catch (err) {
    if (!(err instanceof ToolFailure)) throw err; // refused calls (missing, exists, not empty) are part of the game
  }
}

void test('property: random write/edit/move/delete turns are undone, newest first, to the exact prior tree', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(opArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 3 }), fc.constantFrom(0o600, 0o644, 0o640), async (turns, mode) => {
      const rig = checkpointRig(t);
      writeFileSync(join(rig.tree, 'a.txt'), 'alpha');
      chmodSync(join(rig.tree, 'a.txt'), mode);
      mkdirSync(join(rig.tree, 'd'));
      writeFileSync(join(rig.tree, 'd', 'c.txt'), 'gamma');
      mkdirSync(join(rig.tree, 'e'), { mode: 0o750 });
      const before: ReturnType<typeof snapshot>[] = [];
      for (const [i, ops] of turns.entries()) {
        before.push(snapshot(rig.tree));
        for (const op of ops) await apply(rig, op, `turn-${i}`);
      }
      for (let i = turns.length - 1; i >= 0; i--) {
        const r = undo(rig, `turn-${i}`);
        if (r !== null) assert.equal(r.refused, false, JSON.stringify(r.plan.steps.map((s) => [s.status, s.action])));
        assert.deepEqual(snapshot(rig.tree), before[i], `after undoing turn-${i}`);
      }
    }),
    { numRuns: 60 },
  );
});
