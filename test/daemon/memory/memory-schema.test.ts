// Migration 6 (daemon/memory/memory-schema.ts) on a database written by the schema before it: CJK items
// stored earlier become searchable by character and word, Latin items keep matching, episodes kept
// out of search stay out, and the triggers keep the rebuilt index in step afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { MEMORY_MIGRATIONS } from '../../../daemon/memory/memory-schema';
import { memoryFixture } from './memory-fixture';

void test('migration 6 indexes CJK of items stored before it; unsearchable episodes stay out of the index', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-memory-'));
  const old = new SqliteStore(join(dir, 'brain.db'), { groupCommit: false });
  old.migrate('memory', MEMORY_MIGRATIONS.filter((m) => m.version <= 5));
  const note = (id: string, text: string, tags = ''): void => {
    old.run('INSERT INTO memory_notes (id, text, source, tags, created_at, updated_at) VALUES (?, ?, ?, ?, 1, 1)', [id, text, 'user', tags]);
  };
  note('note_zh', '我的密码是sunflower42');
  note('note_en', 'The bike lock code is 7391');
  note('note_tag', 'Call the office', '["工作"]');
  const episode = (id: string, summary: string, searchable: number): void => {
    old.run("INSERT INTO memory_episodes (id, summary, reason, summariser, message_count, created_at, searchable) VALUES (?, ?, 'session_end', 'extractive', 2, 1, ?)", [id, summary, searchable]);
  };
  episode('ep_ja', 'ユーザーは駐車場の場所を聞いた', 1);
  episode('ep_hidden', 'ユーザーは駐車場について一言だけ', 0);
  old.run("INSERT INTO memory_triples (id, subject, predicate, object, subject_key, predicate_key, object_key, confidence, created_at, updated_at) VALUES ('kg_ko', '민수', '좋아한다', '김치찌개', 'a', 'b', 'c', 0.8, 1, 1)");
  old.close();

  const mem = memoryFixture({ dir });
  t.after(() => mem.close());
  const found = async (q: string): Promise<string[]> => (await mem.memory.search(q, { limit: 10 })).results.map((r) => r.id);
  assert.deepEqual(await found('密码'), ['note_zh']);
  assert.deepEqual(await found('密'), ['note_zh']);
  assert.deepEqual(await found('工作'), ['note_tag']);
  assert.deepEqual(await found('bike lock'), ['note_en']);
  assert.deepEqual(await found('駐車場'), ['ep_ja']);
  assert.deepEqual(await found('김치찌개'), ['kg_ko']);
  assert.deepEqual(await found('天气'), []);
  // Written after the migration, through the repositories and the new triggers.
  const later = await mem.memory.remember('駐車場は地下二階');
  assert.deepEqual(await found('地下'), [later.id]);
  assert.equal(mem.store.get<{ v: number }>("SELECT MAX(version) AS v FROM schema_migrations WHERE component = 'memory'")?.v, MEMORY_MIGRATIONS.length);
});
