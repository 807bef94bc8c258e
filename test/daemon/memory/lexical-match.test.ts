// daemon/memory/lexical-match.ts candidate selection with a small cap, against a model computed from
// the stored texts: a tier yields at most `cap` candidates; when the OR would be cut, the items that
// hold every query term come first (the newest `cap` of them), and every such item is found when
// there are fewer than `cap`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { memoryFixture } from './memory-fixture';
import { lexicalMatches } from '../../../daemon/memory/lexical-match';
import { queryTerms } from '../../../daemon/memory/query-terms';
import { TermStats } from '../../../daemon/memory/term-stats';

const VOCAB = ['apple', 'boat', 'candle', 'dune', 'ember', 'fjord'];

void test('candidates: at most cap per tier, full matches first and newest first (fast-check)', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const rand = fc.sample(fc.array(fc.subarray(VOCAB, { minLength: 1 }), { minLength: 60, maxLength: 60 }), { numRuns: 1, seed: 11 })[0]!;
  const notes: { seq: number; words: Set<string> }[] = [];
  for (const words of rand) {
    // A number of its own keeps each text a different note (the same sentence twice is one note).
    await mem.memory.remember(`${words.join(' ')} ${notes.length}`);
    notes.push({ seq: notes.length + 1, words: new Set(words) });
  }
  const stats = new TermStats(mem.store);
  await fc.assert(
    fc.asyncProperty(fc.subarray(VOCAB, { minLength: 2, maxLength: 3 }), fc.integer({ min: 2, max: 12 }), async (query, cap) => {
      const terms = queryTerms(query.join(' '));
      const found = lexicalMatches(mem.store, stats, terms, { floor: 0.55, cap }).filter((s) => s.tier === 'note');
      assert.ok(found.length <= cap, `${found.length} candidates > cap ${cap}`);
      const full = notes.filter((n) => query.every((w) => n.words.has(w))).map((n) => n.seq);
      const got = new Set(found.map((s) => s.seq));
      if (full.length >= cap) {
        // Newest `cap` items holding every term, and nothing else.
        assert.deepEqual([...got].sort((a, b) => b - a), full.sort((a, b) => b - a).slice(0, cap));
      } else {
        for (const seq of full) assert.ok(got.has(seq), `full match ${seq} missing for ${query.join(' ')} (cap ${cap})`);
      }
      for (const s of found) if (full.includes(s.seq)) assert.equal(s.coverage, 1);
    }),
    { numRuns: 80 },
  );
});
