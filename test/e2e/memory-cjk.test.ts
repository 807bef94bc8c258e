// CJK notes through the built brain's HTTP API (issue 9 item 16): a Chinese, a Japanese and a Korean
// note are each found by one character and by one word, also after a restart; an unrelated CJK query
// returns nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import type { Note, SearchResponse } from '../../protocol/memory';

async function post(brain: BrainProcess, text: string): Promise<Note> {
  const res = await brain.api('/api/memory/note', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text }) });
  assert.equal(res.status, 201);
  return (await res.json()) as Note;
}

async function search(brain: BrainProcess, q: string): Promise<string[]> {
  const res = await brain.api(`/api/memory/search?q=${encodeURIComponent(q)}&limit=10`);
  assert.equal(res.status, 200);
  return ((await res.json()) as SearchResponse).results.map((r) => r.id);
}

void test('Chinese, Japanese and Korean notes are found by one character and by one word; unrelated CJK finds nothing', async (t) => {
  const home = tempHome();
  let brain = await startBrain({ home, keepHome: true });
  t.after(async () => {
    await brain.stop();
    rmSync(home, { recursive: true, force: true });
  });
  const zh = await post(brain, '我的wifi密码是sunflower42。');
  const ja = await post(brain, '車は駐車場の地下二階に停めました。');
  const ko = await post(brain, '내 비밀번호는 해바라기입니다.');
  await post(brain, 'The guest wifi password is on the fridge.');
  const expect = async (): Promise<void> => {
    for (const [q, id] of [['密', zh.id], ['密码', zh.id], ['駐', ja.id], ['駐車場', ja.id], ['해', ko.id], ['비밀번호', ko.id]] as const) {
      assert.deepEqual(await search(brain, q), [id], q);
    }
    for (const q of ['天气预报', '電話番号', '날씨']) assert.deepEqual(await search(brain, q), [], q);
  };
  await expect();
  assert.equal(await brain.stop(), 0);
  brain = await startBrain({ home, keepHome: true });
  await expect();
});
