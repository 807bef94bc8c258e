// sync/ops.ts: an op from the wire is accepted only when its shape is an op's and its parts name one
// op of one brain; refusals say malformed or forged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { SyncOp } from '../../protocol/sync';
import { encodeHlc } from '../../sync/hlc';
import { opId, parseOp, stampOp } from '../../sync/ops';
import { tripleId } from '../../sync/triple-id';
import { BRAINS } from './sync-fixtures';

const T0 = 1_764_000_000_000;
const stamp = { wall: T0, logical: 3, brain: BRAINS[0] };
const note = stampOp({ kind: 'note.put', record_id: 'note_abc', base: null, body: { text: 'buy milk', source: 'user', tags: ['shopping'], created_at: T0 } }, BRAINS[0], 7, stamp);
const fact = stampOp({ kind: 'triple.put', record_id: tripleId('Bob', 'likes', 'tea'), body: { subject: 'Bob', predicate: 'likes', object: 'tea', source: 'user', confidence: 0.8 } }, BRAINS[0], 8, stamp);

const refusal = (value: unknown): string => {
  const r = parseOp(value);
  return r.ok ? 'ok' : r.reason;
};

void test('stampOp names the op by origin and seq and stamps it; parseOp accepts it and decodes the stamp', () => {
  assert.equal(note.op_id, `${BRAINS[0]}:7`);
  assert.equal(note.op_id, opId(BRAINS[0], 7));
  assert.equal(note.hlc, encodeHlc(stamp));
  assert.deepEqual(parseOp(JSON.parse(JSON.stringify(note))), { ok: true, op: note, hlc: stamp });
  assert.equal(refusal(fact), 'ok');
  for (const kind of ['note.delete', 'episode.delete', 'triple.delete'] as const) {
    const id = kind === 'note.delete' ? 'note_abc' : kind === 'episode.delete' ? 'ep_abc' : fact.record_id;
    assert.equal(refusal(stampOp({ kind, record_id: id }, BRAINS[0], 1, stamp)), 'ok', kind);
  }
});

void test('malformed: wrong shapes, unknown kinds, extra fields, bad text, oversized bodies', () => {
  const bad: unknown[] = [
    null,
    'op',
    [],
    { ...note, kind: 'note.patch' },
    { ...note, extra: 1 },
    { ...note, body: { ...(note as Extract<SyncOp, { kind: 'note.put' }>).body, text: 'a\u0000b' } },
    { ...note, body: { ...(note as Extract<SyncOp, { kind: 'note.put' }>).body, text: 'x'.repeat(32 * 1024 + 1) } },
    { ...note, seq: 0, op_id: `${BRAINS[0]}:0` },
    { ...note, seq: 1.5 },
    { ...note, record_id: 'ep_abc' },
    { ...note, hlc: note.hlc.toUpperCase() },
    { ...fact, body: { ...(fact as Extract<SyncOp, { kind: 'triple.put' }>).body, confidence: 1.5 } },
  ];
  for (const value of bad) assert.equal(refusal(value), 'malformed', JSON.stringify(value)?.slice(0, 120));
});

void test('forged: an op id, origin or stamp of another brain, or a fact under another fact\'s id', () => {
  assert.equal(refusal({ ...note, op_id: `${BRAINS[0]}:8` }), 'forged');
  assert.equal(refusal({ ...note, origin: BRAINS[1], op_id: `${BRAINS[1]}:7` }), 'forged', 'the stamp is still the first brain\'s');
  assert.equal(refusal({ ...note, hlc: encodeHlc({ ...stamp, brain: BRAINS[1] }) }), 'forged');
  assert.equal(refusal({ ...fact, record_id: tripleId('Bob', 'likes', 'coffee') }), 'forged');
  assert.equal(refusal({ ...note, base: note.op_id }), 'forged');
});

void test('property: no mutation of one field of a valid op is accepted as a different op of the same brain', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1e9 }), fc.integer({ min: 1, max: 1e9 }), (seq, other) => {
      fc.pre(seq !== other);
      const op = stampOp({ kind: 'note.delete', record_id: 'note_x' }, BRAINS[2], seq, { ...stamp, brain: BRAINS[2] });
      assert.equal(refusal(op), 'ok');
      assert.equal(refusal({ ...op, seq: other }), 'forged');
      assert.equal(refusal({ ...op, op_id: opId(BRAINS[2], other) }), 'forged');
    }),
  );
});
