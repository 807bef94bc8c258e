// sync/merge.ts: the register and triple merges are idempotent and order-free on their own (any order,
// any duplicates, the same state), and tombstones go only when every peer has them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encodeHlc } from '../../sync/hlc';
import { emptyRegister, emptyTriple, mergeDelete, mergePut, mergeSource, mergeTripleDelete, registerView, type RegisterState, type SourceEntry, type Tombstone, type TripleState, type Version } from '../../sync/merge';
import { collectable, Replica } from '../../sync/replica';
import { VersionVector } from '../../sync/version-vector';
import { BRAINS, mulberry32, shuffled } from './sync-fixtures';

const T0 = 1_764_000_000_000;
const hlc = (wall: number, brain: string = BRAINS[0]): string => encodeHlc({ wall: T0 + wall, logical: 0, brain });

type RegisterOp = { t: 'put'; v: Version<string> } | { t: 'delete'; d: Tombstone };

/** A random history of one note: puts over earlier puts (or new), and deletes, with distinct stamps. */
const registerHistory = fc.array(fc.tuple(fc.boolean(), fc.nat({ max: 20 }), fc.constantFrom(...BRAINS), fc.nat({ max: 3 })), { maxLength: 25 }).map((steps) => {
  const ops: RegisterOp[] = [];
  steps.forEach(([isDelete, baseIndex, brain, text], i) => {
    const at = hlc(i, brain);
    if (isDelete) ops.push({ t: 'delete', d: { op_id: `${brain}:${i + 1}`, origin: brain, seq: i + 1, hlc: at } });
    else {
      const puts = ops.filter((o): o is Extract<RegisterOp, { t: 'put' }> => o.t === 'put');
      const base = puts.length === 0 || baseIndex > puts.length ? null : puts[baseIndex % puts.length]!.v.op_id;
      ops.push({ t: 'put', v: { op_id: `${brain}:${i + 1}`, hlc: at, origin: brain, base, body: `text ${text}` } });
    }
  });
  return ops;
});

const foldRegister = (ops: readonly RegisterOp[], revisions: boolean): RegisterState<string> =>
  ops.reduce((s, o) => (o.t === 'put' ? mergePut(s, o.v, revisions) : mergeDelete(s, o.d)), emptyRegister<string>());

void test('property: a register is the same whatever the order and however many duplicates (notes and episodes)', () => {
  fc.assert(
    fc.property(registerHistory, fc.integer(), fc.boolean(), (ops, seed, revisions) => {
      const random = mulberry32(seed);
      const once = foldRegister(ops, revisions);
      const again = foldRegister(shuffled([...ops, ...ops.filter(() => random() < 0.5)], random), revisions);
      assert.deepEqual(again, once);
      const view = registerView(once);
      const latestDelete = ops.filter((o) => o.t === 'delete').map((o) => o.d.hlc).sort().at(-1);
      const latestPut = ops.filter((o) => o.t === 'put').map((o) => o.v.hlc).sort().at(-1);
      if (latestPut !== undefined && (latestDelete === undefined || latestPut > latestDelete)) assert.equal(view.current?.hlc, latestPut, 'the greatest stamp is current');
      else assert.equal(view.current, null);
      if (!revisions) assert.deepEqual(view.history, [], 'episodes keep no revisions');
    }),
  );
});

type TripleOp = { t: 'source'; source: string; entry: SourceEntry } | { t: 'delete'; d: Tombstone };
const tripleHistory = fc.array(fc.tuple(fc.nat({ max: 3 }), fc.constantFrom('user', 'session:s1', 'note:note_1'), fc.constantFrom(...BRAINS), fc.integer({ min: 1, max: 9 })), { maxLength: 20 }).map((steps) =>
  steps.map(([what, source, brain, c], i): TripleOp => {
    const at = hlc(i, brain);
    if (what === 0) return { t: 'delete', d: { op_id: `${brain}:${i + 1}`, origin: brain, seq: i + 1, hlc: at } };
    return { t: 'source', source, entry: { confidence: what === 1 ? null : c / 10, hlc: at, origin: brain, op_id: `${brain}:${i + 1}` } };
  }),
);
const foldTriple = (ops: readonly TripleOp[]): TripleState =>
  ops.reduce((s, o) => (o.t === 'delete' ? mergeTripleDelete(s, o.d) : mergeSource(s, o.source, o.entry, o.entry.confidence === null ? null : { subject: 'Bob', predicate: 'likes', object: 'tea' })), emptyTriple());

void test('property: a triple is the same whatever the order and however many duplicates; each source keeps its latest word', () => {
  fc.assert(
    fc.property(tripleHistory, fc.integer(), (ops, seed) => {
      const random = mulberry32(seed);
      const once = foldTriple(ops);
      assert.deepEqual(foldTriple(shuffled([...ops, ...ops.filter(() => random() < 0.5)], random)), once);
      const t = ops.filter((o) => o.t === 'delete').map((o) => o.d.hlc).sort().at(-1) ?? '';
      for (const [source, entry] of once.sources) {
        const latest = ops.filter((o): o is Extract<TripleOp, { t: 'source' }> => o.t === 'source' && o.source === source).map((o) => o.entry.hlc).sort().at(-1);
        assert.equal(entry.hlc, latest);
        assert.ok(entry.hlc > t, 'nothing at or below the tombstone is kept');
      }
    }),
  );
});

void test('collectable: only when every peer applied the delete and this brain has everything the peers had', () => {
  const t: Tombstone = { op_id: `${BRAINS[1]}:2`, origin: BRAINS[1], seq: 2, hlc: hlc(5, BRAINS[1]) };
  const vector = (entries: Record<string, number>): VersionVector => {
    const v = new VersionVector();
    for (const [o, n] of Object.entries(entries)) for (let s = 1; s <= n; s++) v.add(o, s);
    return v;
  };
  const mine = vector({ [BRAINS[0]]: 3, [BRAINS[1]]: 2 });
  assert.equal(collectable(t, mine, [vector({ [BRAINS[1]]: 2 }), vector({ [BRAINS[1]]: 2, [BRAINS[0]]: 3 })]), true);
  assert.equal(collectable(t, mine, [vector({ [BRAINS[1]]: 1 })]), false, 'a peer without the delete');
  assert.equal(collectable(t, mine, [vector({ [BRAINS[1]]: 2, [BRAINS[2]]: 1 })]), false, 'a peer had an op this brain has not seen: it may be an older put of the record');
  assert.equal(collectable(t, mine, []), true, 'a brain without peers tells no one');
});

void test('after collection a retransmitted old put stays deleted (the version vector drops it), and states still agree', () => {
  let now = T0;
  const [a, b] = BRAINS.slice(0, 2).map((brain) => new Replica({ brain, physical: () => now })) as [Replica, Replica];
  const put = a.write({ kind: 'note.put', record_id: 'note_9', body: { text: 'old', source: 'user', tags: [], created_at: now } });
  b.apply(put);
  now += 1;
  const del = b.write({ kind: 'note.delete', record_id: 'note_9' });
  assert.equal(a.collect([b.applied]), 0, 'a has not applied the delete yet');
  a.apply(del);
  assert.equal(b.collect([a.applied]), 1);
  assert.equal(a.collect([b.applied]), 1);
  assert.deepEqual(a.state.snapshot().notes, {});
  assert.equal(b.apply(put).status, 'duplicate');
  assert.equal(b.state.note('note_9'), undefined);
  assert.deepEqual(a.state.snapshot(), b.state.snapshot());
});
