// daemon/skills/skill-store.ts on a real SQLite file: records round-trip (an upgrade keeps the disabled
// flag), setDisabled and remove answer whether the skill was there, runs are kept newest first up to
// RUNS_KEPT per skill (another skill's runs untouched), removing a skill forgets its runs, and the
// records survive reopening the file. statusOf: error wins, then disabled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { RUNS_KEPT, SKILL_MIGRATIONS, SkillStore, statusOf, type SkillRecord } from '../../../daemon/skills/skill-store';
import type { SkillRunView } from '../../../protocol/skills';

function open(t: { after(fn: () => unknown): void }): { store: SkillStore; reopen: () => SkillStore; rows: (skillId: string) => number } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-skill-store-'));
  let sqlite = new SqliteStore(join(dir, 'brain.db'));
  sqlite.migrate('skills', SKILL_MIGRATIONS);
  t.after(() => {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    store: new SkillStore(sqlite),
    rows: (skillId) => sqlite.get<{ n: number }>('SELECT count(*) AS n FROM skill_runs WHERE skill_id = ?', [skillId])!.n,
    reopen: () => {
      sqlite.close();
      sqlite = new SqliteStore(join(dir, 'brain.db'));
      sqlite.migrate('skills', SKILL_MIGRATIONS);
      return new SkillStore(sqlite);
    },
  };
}

const record = (id: string, over: Partial<SkillRecord> = {}): Omit<SkillRecord, 'disabled'> => ({ id, version: '1.0.0', source: 'path', signedBy: 'abc123', unsigned: false, installedAt: 1_700_000_000_000, ...over });
const runView = (n: number): SkillRunView => ({ run_id: `run-${String(n).padStart(3, '0')}`, trigger: 'manual', started_at: 1_700_000_000 + n, status: 'ok', result: { n }, logs: [`line ${n}`], duration_ms: n });

void test('records round-trip, sorted by id; an upgrade keeps the disabled flag; they survive reopening', async (t) => {
  const { store, reopen } = open(t);
  await store.put(record('b-skill'));
  await store.put(record('a-skill', { signedBy: null, unsigned: true, source: 'url' }));
  assert.deepEqual(store.all(), [
    { ...record('a-skill', { signedBy: null, unsigned: true, source: 'url' }), disabled: false },
    { ...record('b-skill'), disabled: false },
  ]);
  assert.equal(await store.setDisabled('b-skill', true), true);
  assert.equal(await store.setDisabled('nobody', true), false);
  await store.put(record('b-skill', { version: '2.0.0', installedAt: 1_800_000_000_000 }));
  assert.deepEqual(store.get('b-skill'), { ...record('b-skill', { version: '2.0.0', installedAt: 1_800_000_000_000 }), disabled: true });
  assert.equal(store.get('nobody'), undefined);
  assert.deepEqual(reopen().get('b-skill')?.disabled, true);
});

void test(`runs: newest first, at most RUNS_KEPT (${RUNS_KEPT}) per skill; another skill's runs stay; remove forgets them`, async (t) => {
  const { store, rows } = open(t);
  await store.put(record('busy'));
  await store.put(record('quiet'));
  await store.addRun('quiet', runView(0));
  for (let n = 1; n <= RUNS_KEPT + 7; n++) await store.addRun('busy', runView(n));
  const runs = store.runs('busy');
  assert.equal(runs.length, RUNS_KEPT);
  assert.equal(rows('busy'), RUNS_KEPT, 'older runs are deleted, not only hidden');
  assert.deepEqual(runs[0], runView(RUNS_KEPT + 7));
  assert.deepEqual(runs.map((r) => r.run_id), Array.from({ length: RUNS_KEPT }, (_, i) => runView(RUNS_KEPT + 7 - i).run_id));
  assert.deepEqual(store.runs('quiet'), [runView(0)]);
  assert.equal(await store.remove('busy'), true);
  assert.equal(await store.remove('busy'), false);
  assert.deepEqual(store.runs('busy'), []);
  assert.equal(rows('busy'), 0);
  assert.deepEqual(store.runs('quiet'), [runView(0)]);
});

void test('statusOf: error wins over disabled, then disabled, else active', () => {
  assert.equal(statusOf(true, 'broken'), 'error');
  assert.equal(statusOf(false, 'broken'), 'error');
  assert.equal(statusOf(true, null), 'disabled');
  assert.equal(statusOf(false, null), 'active');
});
