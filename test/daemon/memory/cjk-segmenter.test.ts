// daemon/memory/cjk-segmenter.ts through real memory search on a real SQLite file: a character, a word
// or any CJK substring of a stored note finds it (Chinese, Japanese, Korean), what it writes is what
// FTS5 stores (fts5vocab), an unrelated CJK query finds nothing, and text without CJK is searched
// exactly as before (issue 9 item 16).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { memoryFixture } from './memory-fixture';
import { cjkIndexText, cjkQuery, hasCjk, splitCjk, trimQueryRun } from '../../../daemon/memory/cjk-segmenter';
import { documentStems, queryTerms, stem } from '../../../daemon/memory/query-terms';
import { contentWords } from '../../../daemon/kernel/text';

const ids = async (mem: ReturnType<typeof memoryFixture>, q: string): Promise<string[]> => (await mem.memory.search(q, { limit: 50 })).results.map((r) => r.id);

void test('a single character, a word and a phrase find Chinese, Japanese and Korean notes; unrelated CJK finds nothing', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const zh = await mem.memory.remember('我的wifi密码是sunflower42，不要告诉别人。');
  const ja = await mem.memory.remember('パスワードは「ひまわり」です。駐車場は地下二階。');
  const ko = await mem.memory.remember('내 비밀번호는 해바라기입니다. 주차는 지하 2층에 했어요.');
  await mem.memory.remember('The guest wifi password is printed on the router.');
  const cases: [string, string][] = [
    ['密', zh.id], ['密码', zh.id], ['wifi密码', zh.id], ['我的wifi密码是什么', zh.id], ['别人', zh.id],
    ['駐', ja.id], ['パスワード', ja.id], ['ﾊﾟｽﾜｰﾄﾞ', ja.id], ['パスワードは何ですか', ja.id], ['地下二階', ja.id],
    ['비밀번호', ko.id], ['비밀번호가 뭐야', ko.id], ['해바라기', ko.id], ['주차', ko.id],
  ];
  for (const [q, id] of cases) assert.deepEqual(await ids(mem, q), [id], q);
  for (const q of ['天气预报', '我的电话号码是什么', 'カレーのレシピ', '날씨 예보', '的', 'です']) assert.deepEqual(await ids(mem, q), [], q);
  // Latin words next to CJK still find what they found before, and nothing more.
  assert.deepEqual(new Set(await ids(mem, 'wifi password')).size, 1);
  assert.ok((await ids(mem, 'sunflower42')).includes(zh.id));
});

void test('a note written in CJK and edited, retagged or forgotten follows the index (triggers keep the CJK column in step)', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const note = await mem.memory.remember('明天去银行');
  assert.deepEqual(await ids(mem, '银行'), [note.id]);
  await mem.memory.parts.notes.update(note.id, { text: '明天去邮局', tags: ['办事'] });
  assert.deepEqual(await ids(mem, '银行'), []);
  assert.deepEqual(await ids(mem, '邮局'), [note.id]);
  assert.deepEqual(await ids(mem, '办事'), [note.id]);
  const [fact] = await mem.memory.addTriples([{ subject: '田中さん', predicate: '住んでいる', object: '大阪' }], 'user');
  assert.deepEqual(await ids(mem, '大阪'), [fact!.id]);
  await mem.memory.forget(note.id);
  assert.deepEqual(await ids(mem, '邮局'), []);
});

// A small alphabet so that notes share characters and words, with half-width katakana, a decomposed
// kana, Latin and punctuation mixed in.
const PIECES = ['密', '码', '猫', '我', '的', '是', '电', '话', 'パ', 'ス', 'ワ', 'ー', 'ド', 'が', 'ひ', 'ﾊﾟ', 'ガ'.normalize('NFD'), '비', '밀', '번', '호', '는', ' ', '，', '。', 'wifi', '42', 'é'];
const cjkText = fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 14 }).map((a) => a.join('')).filter(hasCjk);

void test('every CJK substring of a stored note that asks for anything finds it; every unit is a term FTS5 stores (fast-check)', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const texts = fc.sample(cjkText, { numRuns: 40, seed: 16 });
  const stored: { id: string; text: string }[] = [];
  for (const text of texts) stored.push({ id: (await mem.memory.remember(text)).id, text });
  const vocab = new Set(mem.store.all<{ term: string }>('SELECT term FROM memory_notes_vocab').map((r) => r.term));
  for (const { text } of stored) for (const unit of cjkIndexText(text).split(' ').filter(hasCjk)) assert.ok(vocab.has(unit), `${unit} of ${text} not in fts5vocab`);
  await fc.assert(
    fc.asyncProperty(fc.nat(stored.length - 1), fc.nat(), fc.nat(), async (n, a, b) => {
      const { id, text } = stored[n]!;
      const runs = splitCjk(text).runs;
      const run = [...runs[a % runs.length]!];
      const from = b % run.length;
      const q = run.slice(from, from + 1 + ((a + b) % (run.length - from))).join('');
      const terms = queryTerms(q);
      if (terms.length === 0) return; // only function words, like "the"
      for (const term of terms) assert.ok(vocab.has(term.stem), `${term.stem} of ${q} not in fts5vocab`);
      assert.ok((await ids(mem, q)).includes(id), `${q} did not find ${text}`);
    }),
    { numRuns: 150, seed: 9 },
  );
});

void test('text without CJK is indexed and queried exactly as before (fast-check)', () => {
  const before = (q: string): string[] => [...new Set(contentWords(q).map(stem))].slice(0, 16);
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 80 }).filter((s) => !hasCjk(s)), (text) => {
      assert.equal(cjkIndexText(text), '');
      assert.deepEqual(cjkQuery(text), { units: [], rest: text });
      assert.deepEqual(queryTerms(text).map((x) => x.stem), before(text));
    }),
    { numRuns: 500 },
  );
  assert.deepEqual(queryTerms('Please remember: what is the RUNNING runs?').map((x) => x.stem), ['run']);
});

void test('query runs lose only their edge function words, and never a word that merely contains one', () => {
  assert.equal(trimQueryRun('我的密码是什么'), '密码');
  assert.equal(trimQueryRun('パスワードは何ですか'), 'パスワード');
  assert.equal(trimQueryRun('비밀번호가'), '비밀번호');
  assert.equal(trimQueryRun('目的'), '目的');
  assert.equal(trimQueryRun('什么'), '');
  fc.assert(
    fc.property(cjkText, (text) => {
      for (const run of splitCjk(text).runs) {
        const r = trimQueryRun(run);
        // What is left is a piece of the run, so it matches whatever holds the run.
        assert.ok(run.includes(r));
        for (const u of cjkQuery(r).units) assert.ok(documentStems(text).has(u), `${u} of ${run}`);
      }
    }),
    { numRuns: 300 },
  );
});
