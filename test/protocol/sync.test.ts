// protocol/sync.ts: the op and cursor schemas of federated sync. A brain id is what mesh/brain-id.ts
// makes, a stamp is what sync/hlc.ts writes, and every kind of op validates with its body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Value } from '@sinclair/typebox/value';
import { isBrainId } from '../../mesh/brain-id';
import { BRAIN_ID_PATTERN, HLC_PATTERN, OP_ID_PATTERN, SYNC_OP_KINDS, SyncOp } from '../../protocol/sync';
import { encodeHlc, MAX_LOGICAL } from '../../sync/hlc';
import { stampOp, type UnstampedOp } from '../../sync/ops';
import { tripleId } from '../../sync/triple-id';

const BRAIN = '0f0e0d0c-0b0a-4908-8706-050403020100';
const T0 = 1_764_000_000_000;

void test('property: BRAIN_ID_PATTERN accepts exactly the brain ids mesh/brain-id.ts accepts', () => {
  const re = new RegExp(BRAIN_ID_PATTERN);
  fc.assert(fc.property(fc.oneof(fc.uuid({ version: 4 }), fc.uuid(), fc.string({ maxLength: 40 })), (s) => assert.equal(re.test(s), isBrainId(s), s)));
});

void test('property: every encoded stamp matches HLC_PATTERN, every op id OP_ID_PATTERN', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), fc.integer({ min: 0, max: MAX_LOGICAL }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (wall, logical, seq) => {
      assert.match(encodeHlc({ wall, logical, brain: BRAIN }), new RegExp(HLC_PATTERN));
      assert.match(`${BRAIN}:${seq}`, new RegExp(OP_ID_PATTERN));
    }),
  );
  assert.doesNotMatch(`${BRAIN}:0`, new RegExp(OP_ID_PATTERN));
  assert.doesNotMatch(`${BRAIN}:01`, new RegExp(OP_ID_PATTERN));
});

void test('an op of every kind validates; a body of another kind does not', () => {
  const kg = tripleId('Bob', 'likes', 'tea');
  const changes: UnstampedOp[] = [
    { kind: 'note.put', record_id: 'note_1', base: null, body: { text: 'hello', source: 'user', tags: ['a'], created_at: T0 } },
    { kind: 'note.delete', record_id: 'note_1' },
    { kind: 'episode.put', record_id: 'ep_1', body: { session_id: null, summary: 'we talked', reason: 'manual', summariser: 'extractive', message_count: 2, started_at: null, ended_at: T0, created_at: T0 } },
    { kind: 'episode.delete', record_id: 'ep_1' },
    { kind: 'triple.put', record_id: kg, body: { subject: 'Bob', predicate: 'likes', object: 'tea', source: 'user', confidence: 0.8 } },
    { kind: 'triple.retract', record_id: kg, body: { source: 'user' } },
    { kind: 'triple.delete', record_id: kg },
  ];
  assert.deepEqual(changes.map((c) => c.kind), [...SYNC_OP_KINDS]);
  changes.forEach((c, i) => {
    const op = stampOp(c, BRAIN, i + 1, { wall: T0, logical: i, brain: BRAIN });
    assert.ok(Value.Check(SyncOp, op), `${c.kind}: ${JSON.stringify([...Value.Errors(SyncOp, op)][0])}`);
  });
  const notePut = stampOp(changes[0]!, BRAIN, 1, { wall: T0, logical: 0, brain: BRAIN });
  assert.equal(Value.Check(SyncOp, { ...notePut, kind: 'episode.put' }), false);
  assert.equal(Value.Check(SyncOp, { ...notePut, body: { text: ' ', source: 'user', tags: [], created_at: T0 } }), false, 'a blank note');
  assert.equal(Value.Check(SyncOp, { ...notePut, body: { text: 'x', source: 'user', tags: Array.from({ length: 17 }, (_, i) => `t${i}`), created_at: T0 } }), false, 'more tags than a note may have');
});
