import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryFixture } from './memory-fixture';
import { retention, decayFactor } from '../../../daemon/memory/decay';

const DAY = 86_400_000;
const params = { enabled: true, half_life_days: 90, rehearsal_factor: 2, weight: 0.3 };

void test('forgetting curve: halves per half-life, recalls stretch it, never below 1 - weight', () => {
  const now = 1000 * DAY;
  assert.equal(retention(params, { created_at: now - 90 * DAY, recalled_at: null, recall_count: 0 }, now), 0.5);
  assert.equal(retention(params, { created_at: now - 180 * DAY, recalled_at: null, recall_count: 1 }, now), 0.5);
  assert.equal(retention(params, { created_at: now - 900 * DAY, recalled_at: now, recall_count: 1 }, now), 1);
  assert.ok(decayFactor(params, 0) >= 0.7);
  assert.equal(decayFactor({ ...params, enabled: false }, 0), 1);
});

void test('an unrecalled old note ranks below an equally relevant one that search keeps recalling; nothing is deleted', async (t) => {
  const clock = { now: 2000 * DAY };
  const mem = memoryFixture({ clock: () => clock.now });
  t.after(() => mem.close());
  clock.now -= 400 * DAY;
  const a = await mem.memory.remember('Kayak rental at the lake');
  const b = await mem.memory.remember('Kayak rental at the river');
  clock.now += 200 * DAY;
  // b is recalled (returned by search) while a is not.
  mem.recalls.record([{ tier: 'note', id: b.id }], clock.now);
  await mem.recalls.flush();
  clock.now += 200 * DAY;
  const res = await mem.memory.search('kayak rental', { limit: 5 });
  assert.deepEqual(res.results.map((r) => r.id), [b.id, a.id]);
  assert.ok(res.results[1]!.signals.decay < res.results[0]!.signals.decay);
  assert.ok(mem.memory.parts.notes.get(a.id));
  await mem.recalls.flush();
  assert.equal(mem.memory.parts.notes.get(a.id)!.recall.count, 1);
});
