// svc checkpoints on a real home, no brain: the list, show (changes nothing) and undo with its exit
// codes — 0 done, 1 refused (drifted files named, --force suggested) or no such turn — and --json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkpointsList, checkpointsShow, checkpointsUndo } from '../../../cli/commands/checkpoints';
import { io } from '../../helpers/cli-rig';
import { checkpointRig } from '../../daemon/files/checkpoint-rig';

void test('a home where the agent never changed a file: an empty list, show and undo exit 1, nothing created', async (t) => {
  const rig = checkpointRig(t);
  const { io: cli, text } = io();
  assert.equal(await checkpointsList(rig.home, cli, { json: false }), 0);
  assert.equal(text.out, 'no checkpoints: the assistant has not changed any file\n');
  assert.equal(await checkpointsShow(rig.home, cli, { json: false }), 1);
  assert.equal(await checkpointsUndo(rig.home, cli, { force: false, json: false }), 1);
  assert.match(text.err, /no checkpoints/);
  text.out = '';
  assert.equal(await checkpointsList(rig.home, cli, { json: true }), 0);
  assert.equal(text.out, '[]\n');
});

void test('list, show, refused undo of a drifted turn (exit 1), --force, and an undo already done', async (t) => {
  const rig = checkpointRig(t);
  const a = join(rig.tree, 'a.txt');
  writeFileSync(a, 'original');
  await rig.call('edit_file', { path: a, old_text: 'original', new_text: 'agent' }, 'turn-a');
  await rig.call('run_command', { argv: ['true'], cwd: rig.tree }, 'turn-a');
  const { io: cli, text } = io();
  assert.equal(await checkpointsList(rig.home, cli, { json: false }), 0);
  assert.match(text.out, /^TURN\s+SESSION\s+LAST CHANGE\s+CHANGES\s+STATE\nturn-a\s+session-1\s+\S+\s+2\s+1 not revertible\n$/);
  writeFileSync(a, 'by hand');
  text.out = '';
  assert.equal(await checkpointsShow(rig.home, cli, { json: false }), 0);
  assert.match(text.out, /^turn turn-a: revert plan, newest change first \(nothing has been changed\)\n {2}not revertible {2}ran \["true"\] in .*\n {2}drifted +restore .*a\.txt.*changed after the agent's turn, now a file with other content/);
  assert.match(text.out, /svc checkpoints undo turn-a --force discards/);
  assert.equal(readFileSync(a, 'utf8'), 'by hand');
  assert.equal(await checkpointsUndo(rig.home, cli, { force: false, json: false }), 1);
  assert.match(text.err, /turn turn-a not reverted; nothing was changed[\s\S]*drifted.*a\.txt[\s\S]*svc checkpoints undo turn-a --force/);
  assert.equal(readFileSync(a, 'utf8'), 'by hand');
  text.out = '';
  assert.equal(await checkpointsUndo(rig.home, cli, { turnId: 'turn-a', force: true, json: false }), 0);
  assert.match(text.out, /^turn turn-a reverted:\n/);
  assert.equal(readFileSync(a, 'utf8'), 'original');
  text.out = '';
  assert.equal(await checkpointsUndo(rig.home, cli, { force: false, json: false }), 0);
  assert.equal(text.out, 'turn turn-a was already reverted; nothing to do\n');
  text.out = '';
  assert.equal(await checkpointsList(rig.home, cli, { json: false }), 0);
  assert.match(text.out, /turn-a\s+session-1\s+\S+\s+2\s+reverted, 1 not revertible\n$/);
  assert.equal(await checkpointsShow(rig.home, cli, { turnId: 'nope', json: false }), 1);
  assert.match(text.err, /no checkpoints for turn nope/);
});

void test('--json: show and undo describe every step', async (t) => {
  const rig = checkpointRig(t);
  await rig.call('write_file', { path: join(rig.tree, 'new.txt'), content: 'x' }, 'turn-j');
  const { io: cli, text } = io();
  assert.equal(await checkpointsShow(rig.home, cli, { json: true }), 0);
  const shown = JSON.parse(text.out) as { turn_id: string; steps: { status: string; kind: string; tool: string }[] };
  assert.equal(shown.turn_id, 'turn-j');
  assert.deepEqual(shown.steps.map((s) => [s.status, s.kind, s.tool]), [['revert', 'write', 'write_file']]);
  text.out = '';
  assert.equal(await checkpointsUndo(rig.home, cli, { turnId: 'turn-j', force: false, json: true }), 0);
  const undone = JSON.parse(text.out) as { refused: boolean; applied: unknown[] };
  assert.equal(undone.refused, false);
  assert.equal(undone.applied.length, 1);
});
