// daemon/memory/vector-index.ts on a real SQLite file: sign codes, exact re-scoring against brute
// force (fast-check, dimensions that are and are not multiples of 32), put/delete as a model of a
// map, and loading rows written before codes existed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { memoryFixture, type MemoryFixture } from './memory-fixture';
import { VectorIndex, fromBlob, signCode, toBlob } from '../../../daemon/memory/vector-index';
import type { Tier } from '../../../protocol/memory';

const MODEL = 'test-model';

async function store(mem: MemoryFixture, id: string, v: Float32Array, opts: { code?: boolean; model?: string } = {}): Promise<void> {
  await mem.store.write((db) =>
    db.run('INSERT INTO memory_vectors (item_id, model, dim, vec, code) VALUES (?, ?, ?, ?, ?) ON CONFLICT(item_id) DO UPDATE SET vec = excluded.vec, code = excluded.code, model = excluded.model', [
      id,
      opts.model ?? MODEL,
      v.length,
      toBlob(v),
      opts.code === false ? null : toBlob(signCode(v)),
    ]),
  );
}

function bruteForce(items: Map<string, Float32Array>, q: Float32Array, k: number): { id: string; cosine: number }[] {
  const cos = (a: Float32Array, b: Float32Array): number => {
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (let j = 0; j < a.length; j++) {
      dot += a[j]! * b[j]!;
      na += a[j]! ** 2;
      nb += b[j]! ** 2;
    }
    return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
  };
  return [...items].map(([id, v]) => ({ id, cosine: cos(q, v) })).sort((a, b) => b.cosine - a.cosine).slice(0, k);
}

const vector = (dim: number) => fc.array(fc.float({ min: -1, max: 1, noNaN: true, noDefaultInfinity: true }), { minLength: dim, maxLength: dim }).map((a) => Float32Array.from(a));

void test('signCode sets bit j exactly where component j is positive', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 130 }).chain(vector), (v) => {
      const code = signCode(v);
      assert.equal(code.length, Math.ceil(v.length / 32));
      for (let j = 0; j < v.length; j++) assert.equal((code[j >>> 5]! >>> (j & 31)) & 1, v[j]! > 0 ? 1 : 0, `bit ${j}`);
    }),
  );
});

void test('with every item re-scored, nearest() is brute force; with fewer, it returns exact cosines of real items, best first', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 3, max: 70 }).chain((dim) => fc.tuple(fc.array(vector(dim), { minLength: 1, maxLength: 40 }), vector(dim), fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 20 }))),
      async ([vectors, q, k, oversample]) => {
        run++;
        const items = new Map(vectors.map((v, i) => [`note_r${run}x${i}`, v]));
        for (const [id, v] of items) await store(mem, id, v);
        const full = new VectorIndex(mem.store, MODEL, 1000);
        const partial = new VectorIndex(mem.store, MODEL, oversample);
        for (const [id, v] of items) {
          full.put(id, 'note', v);
          partial.put(id, 'note', v);
        }
        const expected = bruteForce(items, q, k);
        const got = full.nearest(q, k);
        assert.deepEqual(got.map((h) => h.cosine.toFixed(5)), expected.map((h) => h.cosine.toFixed(5)));
        const some = partial.nearest(q, k);
        assert.ok(some.length === Math.min(k, items.size), `${some.length} hits for k=${k}`);
        for (let i = 1; i < some.length; i++) assert.ok(some[i - 1]!.cosine >= some[i]!.cosine);
        for (const h of some) assert.equal(h.cosine.toFixed(5), bruteForce(new Map([[h.id, items.get(h.id)!]]), q, 1)[0]!.cosine.toFixed(5));
      },
    ),
    { numRuns: 40 },
  );
});

void test('put, replace and delete behave like a map; other models and other sizes stay out', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const index = new VectorIndex(mem.store, MODEL);
  const model = new Map<string, Float32Array>();
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom('put', 'delete'), fc.integer({ min: 0, max: 6 }), vector(8)), { maxLength: 30 }), async (ops) => {
      for (const [op, n, v] of ops) {
        const id = `note_m${n}`;
        if (op === 'put') {
          await store(mem, id, v);
          index.put(id, 'note', v);
          model.set(id, v);
        } else {
          index.delete(id);
          model.delete(id);
        }
        assert.equal(index.size, model.size);
        for (let i = 0; i <= 6; i++) assert.equal(index.has(`note_m${i}`), model.has(`note_m${i}`));
      }
      const q = Float32Array.from([1, -1, 1, -1, 1, -1, 1, -1]);
      assert.deepEqual(index.nearest(q, 3).map((h) => h.id), bruteForce(model, q, 3).map((h) => h.id));
    }),
    { numRuns: 30 },
  );
  index.put('note_wrong_size', 'note', Float32Array.from([1, 2, 3]));
  assert.equal(index.has('note_wrong_size'), false);
});

void test('load() reads codes of the model only, and gives rows stored before codes existed their code', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const a = Float32Array.from([0.5, -0.25, 1, 0]);
  const b = Float32Array.from([-0.5, 0.25, -1, 0.1]);
  await store(mem, 'note_a', a);
  await store(mem, 'ep_b', b, { code: false });
  await store(mem, 'note_c', a, { model: 'other-model' });
  const tiers: Record<string, Tier> = { note_a: 'note', ep_b: 'episode', note_c: 'note' };
  const index = new VectorIndex(mem.store, MODEL);
  await index.load((id) => tiers[id]);
  assert.equal(index.size, 2);
  assert.equal(index.has('note_c'), false);
  const code = mem.store.get<{ code: Uint8Array }>('SELECT code FROM memory_vectors WHERE item_id = ?', ['ep_b'])?.code;
  assert.ok(code, 'code written back');
  assert.deepEqual(new Uint32Array(code.buffer.slice(code.byteOffset, code.byteOffset + code.byteLength)), signCode(b));
  assert.deepEqual(index.nearest(b, 1).map((h) => [h.id, h.tier]), [['ep_b', 'episode']]);
});

void test('fromBlob reads a vector back from a BLOB at any byte offset (aligned ones without a copy)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 40 }).chain(vector), fc.integer({ min: 0, max: 7 }), (v, offset) => {
      const bytes = toBlob(v);
      const backing = new Uint8Array(bytes.byteLength + offset);
      backing.set(bytes, offset);
      const blob = backing.subarray(offset);
      assert.deepEqual([...fromBlob(blob)], [...v]);
    }),
  );
});
