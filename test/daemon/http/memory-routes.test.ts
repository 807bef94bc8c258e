import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { testApp, auth } from '../../helpers/app';
import { memoryRoutes } from '../../../daemon/http/memory-routes';
import { memoryFixture } from '../memory/memory-fixture';
import type { EpisodePage, Note, SearchResponse, KnowledgeResult, Triple } from '../../../protocol/memory';

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const mem = memoryFixture();
  const { app } = await testApp({ routes: [memoryRoutes(mem)] });
  t.after(async () => {
    await app.close();
    await mem.close();
  });
  return { app, mem };
}

void test('POST /api/memory/note returns 201 with the durable note; GET/PATCH/DELETE /api/memory/notes/:id', async (t) => {
  const { app } = await setup(t);
  const r = await app.inject({ method: 'POST', url: '/api/memory/note', headers: auth, payload: { text: 'The wifi password is hunter2', tags: ['home'] } });
  assert.equal(r.statusCode, 201);
  const note = r.json<Note>();
  assert.match(note.id, /^note_/);
  assert.deepEqual(note.tags, ['home']);
  assert.equal(note.source, 'user');
  const got = await app.inject({ method: 'GET', url: `/api/memory/notes/${note.id}`, headers: auth });
  assert.equal(got.json<Note>().text, 'The wifi password is hunter2');
  const patched = await app.inject({ method: 'PATCH', url: `/api/memory/notes/${note.id}`, headers: auth, payload: { text: 'The wifi password is correcthorse' } });
  assert.equal(patched.json<Note>().text, 'The wifi password is correcthorse');
  const found = await app.inject({ method: 'GET', url: '/api/memory/search?q=wifi%20password', headers: auth });
  assert.deepEqual(found.json<SearchResponse>().results.map((x) => x.id), [note.id]);
  const del = await app.inject({ method: 'DELETE', url: `/api/memory/notes/${note.id}`, headers: auth });
  assert.deepEqual(del.json(), { id: note.id, deleted: true });
  const gone = await app.inject({ method: 'GET', url: `/api/memory/notes/${note.id}`, headers: auth });
  assert.equal(gone.statusCode, 404);
  assert.equal(gone.json<{ error: { code: string } }>().error.code, 'NOT_FOUND');
  const after = await app.inject({ method: 'GET', url: '/api/memory/search?q=wifi%20password', headers: auth });
  assert.deepEqual(after.json<SearchResponse>().results, []);
});

void test('search validates q and limit with 400; a query about something never stored returns nothing', async (t) => {
  const { app } = await setup(t);
  await app.inject({ method: 'POST', url: '/api/memory/note', headers: auth, payload: { text: 'Dentist appointment on Tuesday at 3pm with Dr Kowalski' } });
  for (const url of ['/api/memory/search', '/api/memory/search?q=', '/api/memory/search?q=%20%20', '/api/memory/search?q=x&limit=0', '/api/memory/search?q=x&limit=51', '/api/memory/search?q=x&limit=abc']) {
    const r = await app.inject({ method: 'GET', url, headers: auth });
    assert.equal(r.statusCode, 400, url);
    assert.equal(r.json<{ error: { code: string } }>().error.code, 'BAD_REQUEST');
  }
  const none = await app.inject({ method: 'GET', url: '/api/memory/search?q=quantum%20chromodynamics%20lecture', headers: auth });
  assert.deepEqual(none.json<SearchResponse>(), { results: [], mode: 'lexical', degraded: null });
  const stop = await app.inject({ method: 'GET', url: '/api/memory/search?q=what%20is%20the', headers: auth });
  assert.deepEqual(stop.json<SearchResponse>().results, []);
  const hit = await app.inject({ method: 'GET', url: '/api/memory/search?q=when%20is%20my%20dentist%20appointment', headers: auth });
  const item = hit.json<SearchResponse>().results[0]!;
  assert.equal(item.tier, 'note');
  assert.ok(item.relevance > 0.5 && item.relevance <= 1);
  assert.match(item.timestamp, /^\d{4}-\d\d-\d\dT.*Z$/);
});

void test('episodes page newest first with a cursor; limit bounds are 400; DELETE unknown is 404 NOT_FOUND', async (t) => {
  const { app, mem } = await setup(t);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const ep = await mem.memory.recordEpisode({ sessionId: 's1', reason: 'session_end', messages: [{ role: 'user', content: `Planning trip number ${i} to Lisbon.` }] });
    ids.push(ep!.id);
  }
  const first = (await app.inject({ method: 'GET', url: '/api/memory/episodes?limit=2', headers: auth })).json<EpisodePage>();
  assert.deepEqual(first.items.map((e) => e.id), [ids[4], ids[3]]);
  const second = (await app.inject({ method: 'GET', url: `/api/memory/episodes?limit=2&cursor=${first.next_cursor}`, headers: auth })).json<EpisodePage>();
  assert.deepEqual(second.items.map((e) => e.id), [ids[2], ids[1]]);
  const third = (await app.inject({ method: 'GET', url: `/api/memory/episodes?limit=2&cursor=${second.next_cursor}`, headers: auth })).json<EpisodePage>();
  assert.deepEqual(third.items.map((e) => e.id), [ids[0]]);
  assert.equal(third.next_cursor, null);
  for (const url of ['/api/memory/episodes?limit=0', '/api/memory/episodes?limit=201', '/api/memory/episodes?cursor=bm9wZQ']) {
    assert.equal((await app.inject({ method: 'GET', url, headers: auth })).statusCode, 400, url);
  }
  const del = await app.inject({ method: 'DELETE', url: `/api/memory/episodes/${ids[0]}`, headers: auth });
  assert.equal(del.statusCode, 200);
  const again = await app.inject({ method: 'DELETE', url: `/api/memory/episodes/${ids[0]}`, headers: auth });
  assert.equal(again.statusCode, 404);
  assert.equal(again.json<{ error: { code: string } }>().error.code, 'NOT_FOUND');
});

void test('knowledge: add, merge from two sources, filter and multi-hop, patch, delete', async (t) => {
  const { app } = await setup(t);
  const add = (source: string, triples: unknown[]) => app.inject({ method: 'POST', url: '/api/memory/knowledge', headers: auth, payload: { source, triples } });
  const a = await add('session:1', [{ subject: 'Alice', predicate: 'sister of', object: 'Bob', confidence: 0.5 }, { subject: 'Bob', predicate: 'lives in', object: 'Lisbon' }]);
  assert.equal(a.statusCode, 201);
  const b = await add('note:x', [{ subject: 'alice ', predicate: 'Sister  of', object: 'bob', confidence: 0.5 }]);
  const merged = b.json<{ triples: Triple[] }>().triples[0]!;
  assert.equal(merged.id, a.json<{ triples: Triple[] }>().triples[0]!.id);
  assert.equal(merged.confidence, 0.75);
  assert.deepEqual(merged.sources.map((s) => s.source), ['session:1', 'note:x']);
  const q0 = (await app.inject({ method: 'GET', url: '/api/memory/knowledge?subject=alice&depth=0', headers: auth })).json<KnowledgeResult>();
  assert.equal(q0.triples.length, 1);
  const q1 = (await app.inject({ method: 'GET', url: '/api/memory/knowledge?subject=alice&depth=1', headers: auth })).json<KnowledgeResult>();
  assert.deepEqual(q1.triples.map((x) => [x.object, x.hop]), [['Bob', 0], ['Lisbon', 1]]);
  assert.equal((await app.inject({ method: 'GET', url: '/api/memory/knowledge?depth=4', headers: auth })).statusCode, 400);
  const p = await app.inject({ method: 'PATCH', url: `/api/memory/knowledge/${merged.id}`, headers: auth, payload: { confidence: 0.2 } });
  assert.equal(p.json<Triple>().confidence, 0.2);
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/memory/knowledge/${merged.id}`, headers: auth })).statusCode, 200);
  assert.equal((await app.inject({ method: 'GET', url: `/api/memory/knowledge/${merged.id}`, headers: auth })).statusCode, 404);
});

interface Envelope {
  error: { code: string; message: string };
}

void test('PATCH of a note changes only what it names: new text keeps the tags, new tags keep the text; PATCH {} is a 400', async (t) => {
  const { app } = await setup(t);
  const note = (await app.inject({ method: 'POST', url: '/api/memory/note', headers: auth, payload: { text: 'Bins go out on Thursday', tags: ['home', 'chores'] } })).json<Note>();
  const url = `/api/memory/notes/${note.id}`;
  const text = await app.inject({ method: 'PATCH', url, headers: auth, payload: { text: 'Bins go out on Wednesday' } });
  assert.equal(text.statusCode, 200);
  assert.deepEqual(text.json<Note>().tags, ['home', 'chores']);
  const tags = await app.inject({ method: 'PATCH', url, headers: auth, payload: { tags: ['home'] } });
  assert.equal(tags.json<Note>().text, 'Bins go out on Wednesday');
  const empty = await app.inject({ method: 'PATCH', url, headers: auth, payload: {} });
  assert.equal(empty.statusCode, 400);
  assert.equal(empty.json<Envelope>().error.code, 'BAD_REQUEST');
  const stored = (await app.inject({ method: 'GET', url, headers: auth })).json<Note>();
  assert.deepEqual([stored.text, stored.tags], ['Bins go out on Wednesday', ['home']]);
});

void test('bad note input is a 400 and stores nothing: NUL or other controls in text or tags, a number for text, whitespace only', async (t) => {
  const { app } = await setup(t);
  const payloads: unknown[] = [
    { text: 'the code is 1234\u0000 and more' },
    { text: 'fine', tags: ['a\u0000b'] },
    { text: 'bell \u0007 rings' },
    { text: 'fine', tags: ['two\nlines'] },
    { text: 'lone \ud800 surrogate' },
    { text: 123 },
    { text: ' \n\t ' },
    { text: 'fine', source: 'user\u0000' },
  ];
  for (const payload of payloads) {
    const r = await app.inject({ method: 'POST', url: '/api/memory/note', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    assert.equal(r.statusCode, 400, JSON.stringify(payload));
    assert.equal(r.json<Envelope>().error.code, 'BAD_REQUEST');
  }
  const note = (await app.inject({ method: 'POST', url: '/api/memory/note', headers: auth, payload: { text: 'kept' } })).json<Note>();
  const patched = await app.inject({ method: 'PATCH', url: `/api/memory/notes/${note.id}`, headers: auth, payload: { text: 'x\u0000y' } });
  assert.equal(patched.statusCode, 400);
  const list = (await app.inject({ method: 'GET', url: '/api/memory/notes', headers: auth })).json<{ items: Note[] }>();
  assert.deepEqual(list.items.map((n) => n.text), ['kept']);
});

void test('limit must be a finite integer on every list route: Infinity, -Infinity, 1e309, 1.5, abc are 400', async (t) => {
  const { app } = await setup(t);
  for (const path of ['/api/memory/notes?', '/api/memory/episodes?', '/api/memory/knowledge?', '/api/memory/search?q=x&', '/api/memory/knowledge?depth=Infinity&']) {
    for (const v of ['Infinity', '-Infinity', '1e309', '1.5', 'abc']) {
      const r = await app.inject({ method: 'GET', url: `${path}limit=${v}`, headers: auth });
      assert.equal(r.statusCode, 400, `${path}limit=${v}`);
      assert.equal(r.json<Envelope>().error.code, 'BAD_REQUEST');
    }
  }
});

void test('property: any note text without refused characters is stored and read back exactly (real SQLite)', async (t) => {
  const { app } = await setup(t);
  const char = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 4 }), fc.constantFrom('\t', '\n', '\r\n', '🙂', '\uFFFE', '\u00A0', '%', "'")).filter((s) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/.test(s));
  const text = fc.array(char, { minLength: 1, maxLength: 30 }).map((p) => p.join('')).filter((s) => /\S/.test(s));
  let n = 0;
  await fc.assert(
    fc.asyncProperty(text, async (generated) => {
      // A distinct first word: remembering the same sentence twice keeps one note (case and punctuation aside).
      const sent = `n${++n} ${generated}`;
      const r = await app.inject({ method: 'POST', url: '/api/memory/note', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ text: sent }) });
      assert.equal(r.statusCode, 201);
      const got = await app.inject({ method: 'GET', url: `/api/memory/notes/${r.json<Note>().id}`, headers: auth });
      assert.equal(got.json<Note>().text, sent);
    }),
    { numRuns: 60 },
  );
});
