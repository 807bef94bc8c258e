// Input that used to lose data or answer 500, against the built brain (docs/api.md "Input rules"):
// NUL and other control characters, non-finite numbers in query strings, over-long ids in paths,
// PATCHes that dropped fields, empty JSON bodies, coerced types, and headings injected into SOUL.md
// and USER.md through their fields.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBrain, type BrainProcess } from '../helpers/brain-process';
import type { Note, WikiList } from '../../protocol/memory';

interface Envelope {
  error: { code: string; message: string; details: unknown };
}

const json = { 'content-type': 'application/json' };

async function brain(t: { after(fn: () => Promise<unknown>): void }): Promise<BrainProcess> {
  const b = await startBrain();
  t.after(() => b.stop());
  return b;
}

/** The answer is the spec 7 envelope with this status and code. */
async function refused(r: Response, status: number, code: string, what: string): Promise<Envelope> {
  assert.equal(r.status, status, what);
  assert.match(r.headers.get('content-type') ?? '', /application\/json/, what);
  const body = (await r.json()) as Envelope;
  assert.equal(body.error.code, code, what);
  assert.equal(typeof body.error.message, 'string', what);
  return body;
}

const send = (b: BrainProcess, method: string, path: string, body: unknown) => b.api(path, { method, headers: json, body: JSON.stringify(body) });

void test('NUL in note text or tags is a 400 and stores nothing; the wiki rebuild keeps answering 200', async (t) => {
  const b = await brain(t);
  const bad: unknown[] = [
    { text: 'the alarm code is 4711\u0000 and the spare key is under the mat' },
    { text: 'fine text', tags: ['home\u0000x'] },
    { text: 'fine text', tags: ['\u0000'] },
    { text: 'escape \u001b[31m red' },
  ];
  for (const body of bad) await refused(await send(b, 'POST', '/api/memory/note', body), 400, 'BAD_REQUEST', JSON.stringify(body));
  const list = (await (await b.api('/api/memory/notes')).json()) as { items: Note[] };
  assert.deepEqual(list.items, []);

  const kept = (await (await send(b, 'POST', '/api/memory/note', { text: 'The boiler is serviced in March', tags: ['home', '日本', '#x', 'a b'] })).json()) as Note;
  assert.equal(kept.text, 'The boiler is serviced in March');
  await refused(await send(b, 'PATCH', `/api/memory/notes/${kept.id}`, { tags: ['home', 'bad\u0000'] }), 400, 'BAD_REQUEST', 'PATCH with a NUL tag');
  for (let i = 0; i < 2; i++) {
    const rebuilt = await b.api('/api/memory/wiki/rebuild', { method: 'POST' });
    assert.equal(rebuilt.status, 200);
  }
  const stored = (await (await b.api(`/api/memory/notes/${kept.id}`)).json()) as Note;
  assert.deepEqual(stored.tags, ['home', '日本', '#x', 'a b']);
});

void test('limit=Infinity, -Infinity, 1e309, 1.5 or abc is a 400 envelope on every list route', async (t) => {
  const b = await brain(t);
  await send(b, 'POST', '/api/memory/note', { text: 'something to list' });
  const lists = ['/api/memory/notes?', '/api/memory/episodes?', '/api/memory/knowledge?', '/api/memory/search?q=something&', '/api/dashboard/timeline?'];
  for (const path of lists) {
    for (const v of ['Infinity', '-Infinity', '1e309', '1.5', 'abc']) await refused(await b.api(`${path}limit=${v}`), 400, 'BAD_REQUEST', `${path}limit=${v}`);
    assert.equal((await b.api(`${path}limit=2`)).status, 200, path);
  }
  await refused(await b.api('/api/memory/knowledge?depth=Infinity'), 400, 'BAD_REQUEST', 'depth=Infinity');
});

void test('a 150-character id in a path is a 404 envelope, a 250-character one a 400 envelope, never a bare 414', async (t) => {
  const b = await brain(t);
  for (const base of ['/api/memory/notes/', '/api/memory/episodes/', '/api/memory/knowledge/', '/api/memory/snapshots/']) {
    await refused(await b.api(`${base}${'n'.repeat(150)}`), 404, 'NOT_FOUND', `${base} 150`);
    await refused(await b.api(`${base}${'n'.repeat(200)}`), 404, 'NOT_FOUND', `${base} 200`);
    await refused(await b.api(`${base}${'n'.repeat(250)}`), 400, 'BAD_REQUEST', `${base} 250`);
    await refused(await b.api(`${base}${'n'.repeat(250)}`, { method: 'DELETE' }), 400, 'BAD_REQUEST', `DELETE ${base} 250`);
  }
});

void test('PATCH of a note changes only what it names: the tags and their wiki topic page survive a text edit; PATCH {} is a 400', async (t) => {
  const b = await brain(t);
  const note = (await (await send(b, 'POST', '/api/memory/note', { text: 'Bins go out on Thursday', tags: ['chores'] })).json()) as Note;
  assert.equal((await b.api('/api/memory/wiki/rebuild', { method: 'POST' })).status, 200);
  const topics = async () => ((await (await b.api('/api/memory/wiki')).json()) as WikiList).items.map((p) => p.slug);
  assert.ok((await topics()).includes('topic-chores'));
  const patched = await send(b, 'PATCH', `/api/memory/notes/${note.id}`, { text: 'Bins go out on Wednesday' });
  assert.equal(patched.status, 200);
  assert.deepEqual(((await patched.json()) as Note).tags, ['chores']);
  assert.equal((await b.api('/api/memory/wiki/rebuild', { method: 'POST' })).status, 200);
  assert.ok((await topics()).includes('topic-chores'), 'the topic page of the kept tag is still there');
  await refused(await send(b, 'PATCH', `/api/memory/notes/${note.id}`, {}), 400, 'BAD_REQUEST', 'PATCH {}');
  const stored = (await (await b.api(`/api/memory/notes/${note.id}`)).json()) as Note;
  assert.deepEqual([stored.text, stored.tags], ['Bins go out on Wednesday', ['chores']]);
});

void test('content-type application/json with an empty body is a request without a body (DELETE, POST)', async (t) => {
  const b = await brain(t);
  const note = (await (await send(b, 'POST', '/api/memory/note', { text: 'to be deleted' })).json()) as Note;
  const del = await b.api(`/api/memory/notes/${note.id}`, { method: 'DELETE', headers: { ...json, 'content-length': '0' } });
  assert.equal(del.status, 200);
  assert.deepEqual(await del.json(), { id: note.id, deleted: true });
  for (const path of ['/api/memory/wiki/rebuild', '/api/providers/cooldowns/reset']) {
    const r = await b.api(path, { method: 'POST', headers: { ...json, 'content-length': '0' } });
    assert.equal(r.status, 200, path);
  }
  // A route that needs a body says so, and malformed JSON is still refused, both in the envelope.
  await refused(await b.api('/api/memory/note', { method: 'POST', headers: { ...json, 'content-length': '0' } }), 400, 'BAD_REQUEST', 'note without a body');
  await refused(await b.api('/api/memory/note', { method: 'POST', headers: json, body: '{"text":' }), 400, 'BAD_REQUEST', 'malformed JSON');
});

void test('types are not coerced where they change meaning; whitespace-only text is refused like a blank search', async (t) => {
  const b = await brain(t);
  await refused(await send(b, 'POST', '/api/memory/note', { text: 123 }), 400, 'BAD_REQUEST', '{"text":123}');
  await refused(await send(b, 'POST', '/api/memory/note', { text: ' \n\t ' }), 400, 'BAD_REQUEST', 'whitespace note');
  await refused(await b.api('/api/memory/search?q=%20%20'), 400, 'BAD_REQUEST', 'blank search');
  const before = (await (await b.api('/api/memory/decay')).json()) as { params: { enabled: boolean } };
  await refused(await send(b, 'PATCH', '/api/memory/decay', { enabled: 'false' }), 400, 'BAD_REQUEST', '{"enabled":"false"}');
  await refused(await send(b, 'PATCH', '/api/memory/decay', { half_life_days: '30' }), 400, 'BAD_REQUEST', '{"half_life_days":"30"}');
  const after = (await (await b.api('/api/memory/decay')).json()) as { params: { enabled: boolean } };
  assert.deepEqual(after.params, before.params);
  assert.equal((await b.api('/api/memory/notes')).status, 200);
  assert.deepEqual(((await (await b.api('/api/memory/notes')).json()) as { items: Note[] }).items, []);
});

void test('USER.md and SOUL.md fields cannot inject a Markdown heading', async (t) => {
  const b = await brain(t);
  const headings = (file: string) => readFileSync(join(b.home, file), 'utf8').split(/\r\n|\r|\n/).filter((l) => /^ {0,3}#/.test(l));
  const soulHeadings = headings('SOUL.md');
  const userHeadings = headings('USER.md');
  for (const [path, body] of [
    ['/api/identity/user', { name: 'Ada\n# Heading' }],
    ['/api/identity/user', { name: 'Ada\r# Heading' }],
    ['/api/identity/soul', { personality: 'calm\n# Heading' }],
    ['/api/identity/soul', { rules: ['be brief\n## Style'] }],
    ['/api/identity/soul', { name: 'Jarvis\u2028# Heading' }],
  ] as const) {
    await refused(await send(b, 'PATCH', path, body), 400, 'BAD_REQUEST', JSON.stringify(body));
  }
  const soul = await send(b, 'PATCH', '/api/identity/soul', { name: '# Heading', style: '## Rules' });
  assert.equal(soul.status, 200);
  const parsed = (await soul.json()) as { name: string; style: string };
  assert.deepEqual([parsed.name, parsed.style], ['# Heading', '## Rules']);
  assert.equal((await send(b, 'PATCH', '/api/identity/user', { name: "Ada $' # Heading" })).status, 200);
  assert.deepEqual(headings('SOUL.md'), soulHeadings);
  assert.deepEqual(headings('USER.md'), userHeadings);
});
