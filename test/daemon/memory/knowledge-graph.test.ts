import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { memoryFixture } from './memory-fixture';
import { noisyOr, tripleId } from '../../../daemon/memory/knowledge-graph';

void test('the same fact from any number of sources merges into one triple with a stable id (fast-check)', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const part = fc.constantFrom('Alice', 'alice', ' ALICE ', 'Bob', 'lives in', 'Lives  in', 'Lisbon', 'lisbon');
  await fc.assert(
    fc.asyncProperty(fc.tuple(part, part, part), fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 1, maxLength: 6 }), async ([s, p, o], assertions) => {
      const ids = new Set<string>();
      const latest = new Map<string, number>();
      for (const [source, confidence] of assertions) {
        const [triple] = await mem.memory.addTriples([{ subject: s, predicate: p, object: o, confidence }], source);
        ids.add(triple!.id);
        latest.set(source, confidence);
      }
      assert.equal(ids.size, 1);
      const id = [...ids][0]!;
      assert.equal(id, tripleId(s.toUpperCase(), p, o.toLowerCase()));
      const stored = mem.memory.parts.knowledge.get(id)!;
      assert.deepEqual(new Set(stored.sources.map((x) => x.source)).size, stored.sources.length);
      assert.ok(Math.abs(stored.confidence - noisyOr([...mem.store.all<{ confidence: number }>('SELECT confidence FROM memory_triple_sources WHERE triple_id = ?', [id])].map((x) => x.confidence))) < 1e-9);
      assert.ok(stored.confidence >= Math.max(...latest.values()) - 1e-9);
      await mem.memory.forget(id);
    }),
    { numRuns: 40 },
  );
});
