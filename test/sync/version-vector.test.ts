// sync/version-vector.ts against a plain set of (origin, seq): exactly-once adds under duplicates and
// reordering, missing() as set difference, merge as union, covers as superset, and the wire form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Value } from '@sinclair/typebox/value';
import { VersionVectorWire } from '../../protocol/sync';
import { missing, VersionVector } from '../../sync/version-vector';
import { BRAINS } from './sync-fixtures';

const op = fc.record({ origin: fc.constantFrom(...BRAINS), seq: fc.integer({ min: 1, max: 40 }) });
const ops = fc.array(op, { maxLength: 120 });
const key = (o: string, s: number): string => `${o}:${s}`;

function build(list: readonly { origin: string; seq: number }[]): { v: VersionVector; set: Set<string> } {
  const v = new VersionVector();
  const set = new Set<string>();
  for (const { origin, seq } of list) {
    assert.equal(v.add(origin, seq), !set.has(key(origin, seq)), 'add is true exactly the first time');
    set.add(key(origin, seq));
  }
  return { v, set };
}

function members(v: VersionVector): Set<string> {
  const out = new Set<string>();
  for (const o of v.origins()) for (const [from, to] of v.runs(o)) for (let s = from; s <= to; s++) out.add(key(o, s));
  return out;
}

void test('property: add and has behave as a set; through is the longest run from 1', () => {
  fc.assert(
    fc.property(ops, (list) => {
      const { v, set } = build(list);
      for (const o of BRAINS) {
        for (let s = 1; s <= 41; s++) assert.equal(v.has(o, s), set.has(key(o, s)));
        let n = 0;
        while (set.has(key(o, n + 1))) n++;
        assert.equal(v.through(o), n);
      }
      assert.deepEqual(members(v), set);
    }),
  );
});

void test('property: missing(theirs, mine) is exactly what mine has and theirs lacks, as ascending disjoint runs', () => {
  fc.assert(
    fc.property(ops, ops, (a, b) => {
      const theirs = build(a);
      const mine = build(b);
      const ranges = missing(theirs.v, mine.v);
      const sent: string[] = [];
      for (const r of ranges) {
        assert.ok(r.from <= r.to);
        for (let s = r.from; s <= r.to; s++) sent.push(key(r.origin, s));
      }
      assert.equal(new Set(sent).size, sent.length, 'nothing is sent twice');
      assert.deepEqual(new Set(sent), new Set([...mine.set].filter((k) => !theirs.set.has(k))));
      for (let i = 1; i < ranges.length; i++) {
        const [p, r] = [ranges[i - 1]!, ranges[i]!];
        assert.ok(p.origin < r.origin || (p.origin === r.origin && p.to + 1 < r.from), 'ordered by origin then seq, runs not adjacent');
      }
    }),
  );
});

void test('property: merge is union, covers is superset, and a merged vector covers both', () => {
  fc.assert(
    fc.property(ops, ops, (a, b) => {
      const x = build(a);
      const y = build(b);
      const m = x.v.clone();
      m.merge(y.v);
      assert.deepEqual(members(m), new Set([...x.set, ...y.set]));
      assert.equal(x.v.covers(y.v), [...y.set].every((k) => x.set.has(k)));
      assert.ok(m.covers(x.v) && m.covers(y.v));
      assert.deepEqual(members(x.v), x.set, 'clone() copied: merging into it left the original alone');
      assert.deepEqual(missing(m, m), []);
    }),
  );
});

void test('property: the wire form validates and reads back as the same vector', () => {
  fc.assert(
    fc.property(ops, (list) => {
      const { v, set } = build(list);
      const wire = v.toWire();
      assert.ok(Value.Check(VersionVectorWire, wire), JSON.stringify([...Value.Errors(VersionVectorWire, wire)].slice(0, 2)));
      assert.deepEqual(members(VersionVector.fromWire(wire)), set);
      assert.deepEqual(VersionVector.fromWire(JSON.parse(JSON.stringify(wire)) as typeof wire).toWire(), wire);
    }),
  );
});

void test('a wire cursor whose through overlaps its extras reads back normalised', () => {
  const v = VersionVector.fromWire({ [BRAINS[0]]: { through: 3, extra: [3, 4, 6] } });
  assert.deepEqual(v.toWire(), { [BRAINS[0]]: { through: 4, extra: [6] } });
  assert.equal(Value.Check(VersionVectorWire, { 'not-a-brain': { through: 1, extra: [] } }), false);
  assert.equal(Value.Check(VersionVectorWire, { [BRAINS[0]]: { through: -1, extra: [] } }), false);
});

void test('reading a long cursor costs what its extras cost, not its length (every op append reads one)', () => {
  const started = performance.now();
  const v = VersionVector.fromWire({ [BRAINS[0]]: { through: 2 ** 30, extra: [2 ** 30 + 2] } });
  v.add(BRAINS[0], 2 ** 30 + 1);
  assert.deepEqual(v.toWire(), { [BRAINS[0]]: { through: 2 ** 30 + 2, extra: [] } });
  assert.ok(performance.now() - started < 500, 'a walk over a billion seqs takes seconds');
});
