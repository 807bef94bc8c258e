// Remembering the same sentence twice stores one note (issue 9 item 15): the earlier note is refreshed
// instead, whatever the case, spacing or closing punctuation of the second telling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import fc from 'fast-check';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { memoryFixture } from './memory-fixture';
import { MEMORY_MIGRATIONS } from '../../../daemon/memory/memory-schema';
import { normaliseNoteText } from '../../../daemon/memory/note-key';
import { SqliteStore } from '../../../daemon/store/sqlite-store';

void test('the same sentence remembered again refreshes the one note: time, recall and tags', async (t) => {
  const clock = { now: Date.parse('2025-01-01T00:00:00Z') };
  const mem = memoryFixture({ clock: () => clock.now });
  t.after(() => mem.close());
  const first = await mem.memory.remember('The spare key is under the blue pot.', { tags: ['home'] });
  clock.now += 86_400_000;
  const again = await mem.memory.remember('  the spare KEY is under the blue pot ', { tags: ['keys'] });
  assert.equal(again.id, first.id);
  assert.equal(again.created_at, first.created_at);
  assert.equal(again.updated_at, new Date(clock.now).toISOString());
  assert.deepEqual(again.recall, { count: 1, last_at: new Date(clock.now).toISOString() });
  assert.deepEqual(again.tags, ['home', 'keys']);
  assert.equal(again.text, 'The spare key is under the blue pot.');
  assert.equal(mem.memory.parts.notes.count(), 1);
  assert.deepEqual((await mem.memory.search('spare key', { limit: 10 })).results.map((r) => r.id), [first.id]);
  // A different sentence is a different note; editing a note into an existing sentence's words makes
  // the next telling of that sentence find the edited note.
  const other = await mem.memory.remember('The spare key is under the red pot.');
  assert.notEqual(other.id, first.id);
  await mem.memory.parts.notes.update(other.id, { text: 'Milk is in the fridge' });
  assert.equal((await mem.memory.remember('milk is in the fridge!')).id, other.id);
});

void test('any sentence told twice, concurrently or not, in any case and spacing, is one note (fast-check)', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const word = fc.stringMatching(/^[a-zA-ZäöüÄÖÜ0-9]{1,8}$/);
  await fc.assert(
    fc.asyncProperty(fc.array(word, { minLength: 1, maxLength: 6 }), fc.boolean(), fc.constantFrom('', '.', '!', ' ?'), async (words, together, end) => {
      const text = words.join(' ');
      const variant = `${words.map((w, i) => (i % 2 ? w.toUpperCase() : w)).join('   ')}${end}`;
      const before = mem.memory.parts.notes.count();
      const [a, b] = together ? await Promise.all([mem.memory.remember(text), mem.memory.remember(variant)]) : [await mem.memory.remember(text), await mem.memory.remember(variant)];
      assert.equal(a.id, b.id);
      assert.ok(mem.memory.parts.notes.count() - before <= 1);
      assert.equal(normaliseNoteText(text), normaliseNoteText(variant));
    }),
    { numRuns: 60 },
  );
});

void test('migration 4 keys the notes a brain already holds: an old sentence told again is not stored twice', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-memory-'));
  const store = new SqliteStore(join(dir, 'brain.db'));
  store.migrate('memory', MEMORY_MIGRATIONS.slice(0, 3));
  store.transaction((db) => db.run("INSERT INTO memory_notes (id, text, source, created_at, updated_at) VALUES ('note_old', 'Bike lock is 7391', 'user', 1, 1)"));
  store.close();
  const mem = memoryFixture({ dir });
  t.after(() => mem.close());
  assert.equal((await mem.memory.remember('bike lock is 7391.')).id, 'note_old');
  assert.equal(mem.memory.parts.notes.count(), 1);
});
