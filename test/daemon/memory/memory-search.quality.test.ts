// Search quality floors on the labelled set (issue 3: precision@5, recall@10, empty-answer accuracy).
// The measured values are reported by `npm run bench`; these floors catch regressions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { memoryFixture } from './memory-fixture';
import { evaluate, loadEvalSet, loadItems } from './search-eval';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');

void test('lexical search on the labelled set meets its quality floors', async (t) => {
  const clock = { now: Date.parse('2025-06-01T12:00:00Z') };
  const mem = memoryFixture({ clock: () => clock.now });
  t.after(() => mem.close());
  const set = loadEvalSet(ROOT);
  assert.ok(set.items.length >= 200 && set.queries.length >= 60);
  const ids = await loadItems(mem, set, clock);
  const m = await evaluate(mem, set, ids);
  t.diagnostic(JSON.stringify({ ...m, failures: m.failures.length }));
  for (const f of m.failures) t.diagnostic(`miss: ${f.q} expected ${f.expected.join(',') || '(nothing)'} got ${f.got.join(',') || '(nothing)'}`);
  assert.ok(m.precision_at_5 >= 0.85, `precision@5 ${m.precision_at_5}`);
  assert.ok(m.recall_at_10 >= 0.9, `recall@10 ${m.recall_at_10}`);
  assert.ok(m.empty_answer_accuracy >= 0.95, `empty-answer accuracy ${m.empty_answer_accuracy}`);
  // Chat must not crowd out memories (issue 9 item 14): a note ranks above the episode repeating it.
  assert.ok(m.answer_first_accuracy >= 0.95, `answer-first accuracy ${m.answer_first_accuracy}`);
  assert.ok(set.items.some((i) => i.tier === 'chat') && set.items.some((i) => i.forget));
});
