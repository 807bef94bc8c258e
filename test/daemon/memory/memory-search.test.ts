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

void test('a note and a fact rank above the newer, shorter episodes that merely repeat them (issue 9 item 14)', async (t) => {
  const clock = { now: Date.parse('2025-01-01T00:00:00Z') };
  const mem = memoryFixture({ clock: () => clock.now });
  t.after(() => mem.close());
  const note = await mem.memory.remember('The spare key for the garden shed hangs behind the boiler door, on the left hook.');
  const [fact] = await mem.memory.addTriples([{ subject: 'bike pump', predicate: 'is in', object: 'the cellar' }], 'user');
  clock.now += 20 * 86_400_000;
  const repeats = await mem.memory.parts.episodes.addEpisode({
    sessionId: 's', summary: 'User: spare key garden shed behind the boiler door, left hook. Assistant: noted, spare key garden shed boiler door left hook.', reason: 'session_end', summariser: 'extractive', messageCount: 4, startedAt: null, endedAt: null,
  });
  const pump = await mem.memory.parts.episodes.addEpisode({ sessionId: 's', summary: 'User: bike pump in the cellar.', reason: 'session_end', summariser: 'extractive', messageCount: 4, startedAt: null, endedAt: null });
  const other = await mem.memory.parts.episodes.addEpisode({ sessionId: 's', summary: 'User asked where the spare key is; it is with the neighbour.', reason: 'session_end', summariser: 'extractive', messageCount: 4, startedAt: null, endedAt: null });
  mem.stats.invalidate();
  const ids = (await mem.memory.search('spare key garden shed', { limit: 10 })).results.map((r) => r.id);
  assert.deepEqual(ids.slice(0, 2), [note.id, repeats.id]);
  const pumpIds = (await mem.memory.search('bike pump cellar', { limit: 10 })).results.map((r) => r.id);
  assert.deepEqual(pumpIds, [fact!.id, pump.id]);
  assert.ok(!ids.includes(other.id) || ids.indexOf(other.id) > 1);
});
