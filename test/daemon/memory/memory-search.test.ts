import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { memoryFixture } from './memory-fixture';
import { queryTerms, ftsExpression } from '../../../daemon/memory/query-terms';

void test('a term searched before it was stored is found right after it is stored (no stale "absent" cache)', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  await mem.memory.remember('unrelated filler about the garden');
  assert.deepEqual((await mem.memory.search('zanzibar', { limit: 5 })).results, []);
  const note = await mem.memory.remember('Trip to Zanzibar in March');
  assert.deepEqual((await mem.memory.search('zanzibar', { limit: 5 })).results.map((r) => r.id), [note.id]);
});

void test('relevance is in [0, 1], results never exceed the limit, and every result names its tier (fast-check)', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const vocab = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'the', 'and', 'running', 'runs'];
  for (let i = 0; i < 40; i++) await mem.memory.remember(Array.from({ length: 1 + (i % 5) }, (_, j) => vocab[(i * 7 + j * 3) % vocab.length]).join(' '));
  await mem.memory.addTriples([{ subject: 'alpha', predicate: 'knows', object: 'bravo' }], 'test');
  await fc.assert(
    fc.asyncProperty(fc.array(fc.constantFrom(...vocab, 'zulu', 'NOT', 'OR', '"', '*', 'ö'), { minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 50 }), async (ws, limit) => {
      const res = await mem.memory.search(ws.join(' '), { limit });
      assert.ok(res.results.length <= limit);
      for (const r of res.results) {
        assert.ok(r.relevance >= 0 && r.relevance <= 1);
        assert.ok(['note', 'episode', 'knowledge'].includes(r.tier));
      }
    }),
    { numRuns: 60 },
  );
});

void test('query parsing drops stopwords, dedupes by stem and quotes FTS5 syntax away (fast-check)', () => {
  assert.deepEqual(queryTerms('Please remember: what is the RUNNING runs?').map((t) => t.stem), ['run']);
  fc.assert(
    fc.property(fc.string({ maxLength: 60 }), (q) => {
      const terms = queryTerms(q);
      assert.equal(new Set(terms.map((t) => t.stem)).size, terms.length);
      const expr = ftsExpression(terms, 'OR');
      // Every term is one quoted string: FTS5 operators in the query are plain words.
      assert.equal(expr === '' ? 0 : expr.split(' OR ').length, terms.length);
      for (const part of expr === '' ? [] : expr.split(' OR ')) assert.match(part, /^"[^"]*"$/);
    }),
  );
});
