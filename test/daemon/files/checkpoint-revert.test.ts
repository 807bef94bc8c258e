// Revert plans over real trees: a plan changes nothing; a folder moved back carries the changes made
// inside it; a move or delete whose result was changed by hand is drifted, and --force puts the prior
// content back from its blob.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256 } from '../../../daemon/files/checkpoint-blobs';
import { planTurn, showTurn, undoTurn } from '../../../daemon/files/checkpoint-revert';
import { checkpointRig, snapshot, type Rig } from './checkpoint-rig';

const plan = (rig: Rig, turn?: string) => rig.checkpoints.index.use((db) => showTurn(db, turn));
const undo = (rig: Rig, turn: string | undefined, force = false) => undoTurn(rig.checkpoints.index, rig.checkpoints.blobs, turn, force);

void test('show changes nothing: neither the tree nor the index', async (t) => {
  const rig = checkpointRig(t);
  writeFileSync(join(rig.tree, 'a.txt'), 'a');
  await rig.call('write_file', { path: join(rig.tree, 'a.txt'), content: 'b' });
  const tree = snapshot(rig.tree);
  const rows = rig.checkpoints.index.use((db) => db.changes('turn-1'));
  assert.deepEqual(plan(rig)?.steps.map((s) => s.status), ['revert']);
  assert.deepEqual(snapshot(rig.tree), tree);
  assert.deepEqual(rig.checkpoints.index.use((db) => db.changes('turn-1')), rows);
  assert.equal(plan(rig, 'no-such-turn'), null);
  assert.deepEqual(planTurn([], 'empty').steps, []);
});

void test('a folder moved, then changed inside its new place, goes back with its content as it was', async (t) => {
  const rig = checkpointRig(t);
  mkdirSync(join(rig.tree, 'src'));
  writeFileSync(join(rig.tree, 'src', 'keep.txt'), 'keep');
  const before = snapshot(rig.tree);
  await rig.call('move_file', { from: join(rig.tree, 'src'), to: join(rig.tree, 'dst') });
  await rig.call('edit_file', { path: join(rig.tree, 'dst', 'keep.txt'), old_text: 'keep', new_text: 'changed' });
  await rig.call('write_file', { path: join(rig.tree, 'dst', 'new.txt'), content: 'new' });
  await rig.call('write_file', { path: join(rig.tree, 'src'), content: 'a file where the folder was' });
  assert.deepEqual(plan(rig)?.steps.map((s) => s.status), ['revert', 'revert', 'revert', 'revert']);
  assert.equal(undo(rig, undefined)?.refused, false);
  assert.deepEqual(snapshot(rig.tree), before);
});

void test('a moved file changed by hand is drifted; --force restores it at its old place and removes the new one', async (t) => {
  const rig = checkpointRig(t);
  const from = join(rig.tree, 'from.txt');
  const to = join(rig.tree, 'to.txt');
  writeFileSync(from, 'prior');
  await rig.call('move_file', { from, to });
  writeFileSync(to, 'edited by hand');
  assert.deepEqual(plan(rig)?.steps.map((s) => s.status), ['drifted']);
  assert.equal(undo(rig, undefined)?.refused, true);
  assert.equal(readFileSync(to, 'utf8'), 'edited by hand');
  assert.equal(undo(rig, undefined, true)?.refused, false);
  assert.equal(readFileSync(from, 'utf8'), 'prior');
  assert.ok(!existsSync(to));
});

void test('a deleted file replaced by hand is drifted; --force puts the deleted content back', async (t) => {
  const rig = checkpointRig(t);
  const a = join(rig.tree, 'a.txt');
  writeFileSync(a, 'deleted content');
  await rig.call('delete_file', { path: a });
  writeFileSync(a, 'a new file');
  assert.deepEqual(plan(rig)?.steps.map((s) => s.status), ['drifted']);
  assert.equal(undo(rig, undefined, true)?.refused, false);
  assert.equal(readFileSync(a, 'utf8'), 'deleted content');
});

void test('a deleted file put back by hand with the same content is in place, and marked reverted', async (t) => {
  const rig = checkpointRig(t);
  const a = join(rig.tree, 'a.txt');
  writeFileSync(a, 'same');
  await rig.call('delete_file', { path: a });
  writeFileSync(a, 'same');
  const r = undo(rig, undefined);
  assert.deepEqual(r?.plan.steps.map((s) => s.status), ['in place']);
  assert.deepEqual(plan(rig)?.steps.map((s) => s.status), ['reverted']);
});

void test('a revert that fails part way marks nothing; the next undo continues, the steps done read in place', async (t) => {
  const rig = checkpointRig(t);
  const a = join(rig.tree, 'a.txt');
  const b = join(rig.tree, 'b.txt');
  writeFileSync(a, 'prior');
  await rig.call('edit_file', { path: a, old_text: 'prior', new_text: 'edited' });
  await rig.call('write_file', { path: b, content: 'created' });
  const blob = join(rig.checkpoints.blobs.dir, sha256('prior'));
  writeFileSync(blob, 'damaged');
  assert.throws(() => undo(rig, undefined), /damaged/);
  assert.ok(!existsSync(b), 'the newest step was reverted before the failure');
  assert.equal(readFileSync(a, 'utf8'), 'edited');
  assert.deepEqual(plan(rig)?.steps.map((s) => s.status), ['in place', 'revert']);
  writeFileSync(blob, 'prior');
  assert.equal(undo(rig, undefined)?.refused, false);
  assert.equal(readFileSync(a, 'utf8'), 'prior');
  assert.deepEqual(plan(rig)?.steps.map((s) => s.status), ['reverted', 'reverted']);
});
