// The memory wiki through the built brain: pages follow the tiers without POST .../wiki/rebuild
// (docs/memory.md, "Wiki").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startBrain, type BrainProcess } from '../helpers/brain-process';
import type { Note, Triple, WikiList, WikiPage } from '../../protocol/memory';

const json = async <T>(brain: BrainProcess, path: string, init?: RequestInit): Promise<{ status: number; body: T }> => {
  const res = await brain.api(path, init);
  return { status: res.status, body: (await res.json()) as T };
};
const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });

void test('a new entity page is listed and readable without a rebuild, and goes when its facts do', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  const note = (await json<Note>(brain, '/api/memory/note', post({ text: 'Marta from next door waters the plants in August.', tags: ['neighbours'] }))).body;
  const created = await json<{ triples: Triple[] }>(brain, '/api/memory/knowledge', post({
    triples: [{ subject: 'Marta', predicate: 'lives', object: 'next door' }, { subject: 'Marta', predicate: 'waters', object: 'the plants' }],
    source: `note:${note.id}`,
  }));
  assert.equal(created.status, 201);
  const [lives, waters] = created.body.triples;

  const listed = (await json<WikiList>(brain, '/api/memory/wiki')).body.items.map(({ slug, title, kind }) => ({ slug, title, kind }));
  assert.deepEqual(listed, [
    { slug: 'marta', title: 'Marta', kind: 'entity' },
    { slug: 'topic-neighbours', title: 'neighbours', kind: 'topic' },
  ]);
  const page = await json<WikiPage>(brain, '/api/memory/wiki/marta');
  assert.equal(page.status, 200);
  assert.equal(page.body.stale, false);
  for (const triple of [lives!, waters!]) assert.deepEqual(page.body.body.find((s) => s.sources[0] === triple.id)?.sources, [triple.id, note.id]);

  assert.equal((await brain.api(`/api/memory/knowledge/${waters!.id}`, { method: 'DELETE' })).status, 200);
  assert.deepEqual((await json<WikiList>(brain, '/api/memory/wiki')).body.items.map((p) => p.slug), ['topic-neighbours']);
  assert.equal((await brain.api('/api/memory/wiki/marta')).status, 404);
});
