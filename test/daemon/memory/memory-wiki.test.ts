// The wiki follows the tiers without a rebuild (docs/memory.md, "Wiki"): a page appears when its
// entity reaches two facts or its tag its first note, disappears when that stops being true, and a
// statement built from a fact names the note the fact came from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { memoryFixture, type MemoryFixture } from './memory-fixture';
import { entityKey, sourceName } from '../../../daemon/memory/knowledge-graph';
import { pageSlug } from '../../../daemon/memory/memory-wiki';

const slugs = (mem: MemoryFixture): string[] => mem.wiki.list().map((p) => p.slug).sort();
const fact = (subject: string, predicate: string, object: string) => ({ subject, predicate, object });

void test('a subject reaching two facts gets a page without a rebuild; falling below two removes it', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const [likes] = await mem.memory.addTriples([fact('Alice', 'likes', 'tea')], 'user');
  assert.deepEqual(slugs(mem), []);
  const [owns] = await mem.memory.addTriples([fact('alice', 'owns', 'a cello')], 'user');
  assert.deepEqual(mem.wiki.list().map(({ slug, title, kind, statements, stale }) => ({ slug, title, kind, statements, stale })), [
    { slug: 'alice', title: 'alice', kind: 'entity', statements: 0, stale: true },
  ]);
  const page = await mem.wiki.read('alice');
  assert.equal(page.stale, false);
  assert.deepEqual(page.body.map((s) => s.sources[0]).sort(), [likes!.id, owns!.id].sort());
  assert.equal(mem.wiki.list()[0]!.statements, 2);

  // A fact joining the compiled page holds it as much as the two it was built from: the page stays
  // (stale) while two facts hold it, and goes with the second deletion, the newcomer.
  const [visits] = await mem.memory.addTriples([fact('ALICE', 'visits', 'Graz')], 'user');
  await mem.memory.forget(likes!.id);
  assert.deepEqual(mem.wiki.list().map((p) => [p.slug, p.stale]), [['alice', true]]);
  await mem.memory.forget(visits!.id);
  assert.deepEqual(slugs(mem), []);
  await assert.rejects(mem.wiki.read('alice'), /not found/i);

  // A placeholder nobody read goes too when its facts do.
  const [again] = await mem.memory.addTriples([fact('Alice', 'likes', 'tea')], 'user');
  assert.deepEqual(slugs(mem), ['alice']);
  await mem.memory.forget(again!.id);
  assert.deepEqual(slugs(mem), []);
});

void test('a tag gets a topic page with its first note and loses it with its last (delete or retag)', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const a = await mem.memory.remember('Prune the apple tree in March.', { tags: ['garden'] });
  assert.deepEqual(mem.wiki.list().map(({ slug, title, kind, stale }) => ({ slug, title, kind, stale })), [{ slug: 'topic-garden', title: 'garden', kind: 'topic', stale: true }]);
  assert.deepEqual((await mem.wiki.read('topic-garden')).body, [{ text: a.text, sources: [a.id] }]);
  const b = await mem.memory.remember('Order seed potatoes.', { tags: ['garden', 'shopping list'] });
  assert.deepEqual(slugs(mem), ['topic-garden', 'topic-shopping-list']);
  await mem.memory.parts.notes.update(a.id, { tags: ['orchard'] });
  assert.deepEqual(slugs(mem), ['topic-garden', 'topic-orchard', 'topic-shopping-list']);
  await mem.memory.parts.notes.update(b.id, { tags: [] });
  assert.deepEqual(slugs(mem), ['topic-orchard']);
  await mem.memory.forget(a.id);
  assert.deepEqual(slugs(mem), []);
});

void test('a fact derived from a note or episode names it, under one spelling, while the item exists', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  assert.equal(sourceName('note_0abc123'), 'note:note_0abc123');
  assert.equal(sourceName('ep_0abc123'), 'episode:ep_0abc123');
  assert.equal(sourceName('kg_0abc123'), 'knowledge:kg_0abc123');
  for (const kept of ['user', 'session:s1', 'note:note_0abc', 'my_tool']) assert.equal(sourceName(kept), kept);

  const note = await mem.memory.remember('Bob moved to Porto and works at the harbour.');
  const [moved, works] = await mem.memory.addTriples([fact('Bob', 'lives in', 'Porto'), fact('Bob', 'works at', 'the harbour')], `note:${note.id}`);
  // The same note posted by its bare id is the same source: the noisy-or does not count it twice.
  const [again] = await mem.memory.addTriples([fact('Bob', 'lives in', 'Porto')], note.id);
  assert.deepEqual(again!.sources.map((s) => s.source), [`note:${note.id}`]);
  assert.equal(again!.confidence, moved!.confidence);

  const page = await mem.wiki.read('bob');
  for (const id of [moved!.id, works!.id]) assert.deepEqual(page.body.find((s) => s.sources[0] === id)!.sources, [id, note.id]);
  assert.ok(page.source_ids.includes(note.id));
  // Forgetting the note forgets the facts that came only from it (forgetting.ts): the page goes.
  await mem.memory.forget(note.id);
  assert.equal(mem.memory.parts.knowledge.get(moved!.id), undefined);
  assert.deepEqual(slugs(mem), []);

  // Provenance that would 404 names nothing: deleting an episode a fact came from drops its id from
  // the statement at the next compile, while the fact (kept by the knowledge graph) stays.
  const ep = await mem.memory.recordEpisode({ sessionId: 's', reason: 'session_end', messages: [{ role: 'user', content: 'Carol plays the oboe and sings in a choir.' }] });
  const [plays, sings] = await mem.memory.addTriples([fact('Carol', 'plays', 'the oboe'), fact('Carol', 'sings in', 'a choir')], ep!.id);
  assert.deepEqual((await mem.wiki.read('carol')).body.find((s) => s.sources[0] === plays!.id)!.sources, [plays!.id, ep!.id]);
  await mem.memory.forget(ep!.id);
  assert.equal(mem.wiki.list()[0]!.stale, true);
  const after = await mem.wiki.read('carol');
  assert.equal(after.body.length, 2); // the two facts: chat lines make no statements
  for (const id of [plays!.id, sings!.id]) assert.deepEqual(after.body.find((s) => s.sources[0] === id)!.sources, [id]);
  assert.ok(!after.source_ids.includes(ep!.id));
});

// ── model-based: after every step the listed pages are exactly the due ones ──

const SUBJECTS = ['Alice', 'alice', 'Bob', 'Garden shed'];
const PREDICATES = ['likes', 'owns', 'visits'];
const OBJECTS = ['tea', 'Bob', 'Alice', 'a cello'];
const TAGS = ['music', 'garden', 'tax 2024', 'home-office'];

type Op =
  | { op: 'fact'; s: string; p: string; o: string }
  | { op: 'unfact' | 'unnote' | 'read'; pick: number }
  | { op: 'note'; mention: string; tags: string[] }
  | { op: 'retag'; pick: number; tags: string[] }
  | { op: 'rebuild' };

const tags = fc.subarray(TAGS, { maxLength: 2 });
const pick = fc.nat(50);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('fact' as const), s: fc.constantFrom(...SUBJECTS), p: fc.constantFrom(...PREDICATES), o: fc.constantFrom(...OBJECTS) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('unfact' as const, 'unnote' as const, 'read' as const), pick }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('note' as const), mention: fc.constantFrom('', ...SUBJECTS), tags }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('retag' as const), pick, tags }) },
  { weight: 1, arbitrary: fc.constant({ op: 'rebuild' as const }) },
);

class Model {
  readonly facts = new Map<string, string>(); // triple id → subject
  readonly notes = new Map<string, string[]>(); // note id → tags

  due(): string[] {
    const perSubject = new Map<string, { title: string; n: number }>();
    for (const s of this.facts.values()) perSubject.set(entityKey(s), { title: s, n: (perSubject.get(entityKey(s))?.n ?? 0) + 1 });
    const entities = [...perSubject.values()].filter((e) => e.n >= 2).map((e) => pageSlug('entity', e.title));
    const topics = new Set([...this.notes.values()].flat().map((tag) => pageSlug('topic', tag)));
    return [...entities, ...topics].sort();
  }
}

const nth = <T>(items: Iterable<T>, i: number): T | undefined => {
  const all = [...items];
  return all.length === 0 ? undefined : all[i % all.length];
};

async function apply(mem: MemoryFixture, model: Model, op: Op): Promise<void> {
  if (op.op === 'fact') {
    const [t] = await mem.memory.addTriples([fact(op.s, op.p, op.o)], 'user');
    if (!model.facts.has(t!.id)) model.facts.set(t!.id, op.s);
  } else if (op.op === 'note') {
    const n = await mem.memory.remember(`A note ${op.mention ? `about ${op.mention}` : 'on nothing much'}.`, { tags: op.tags });
    // The same sentence again is the same note, with the union of the tags (note-repository.ts).
    model.notes.set(n.id, [...new Set([...(model.notes.get(n.id) ?? []), ...op.tags])]);
  } else if (op.op === 'retag' || op.op === 'unnote' || op.op === 'unfact') {
    const id = nth((op.op === 'unfact' ? model.facts : model.notes).keys(), op.pick);
    if (id === undefined) return;
    if (op.op === 'retag') {
      await mem.memory.parts.notes.update(id, { tags: op.tags });
      model.notes.set(id, op.tags);
    } else {
      assert.equal(await mem.memory.forget(id), true);
      (op.op === 'unfact' ? model.facts : model.notes).delete(id);
    }
  } else if (op.op === 'read') {
    const slug = nth(model.due(), op.pick);
    if (slug === undefined) return;
    const page = await mem.wiki.read(slug);
    assert.equal(page.stale, false);
    assert.ok(page.body.length >= (page.kind === 'entity' ? 2 : 1));
    for (const s of page.body) assert.ok(s.sources.length > 0);
  } else {
    await mem.wiki.rebuild();
  }
}

void test('listed pages are always the subjects with two facts and the tags with a note (fast-check)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
      const mem = memoryFixture();
      try {
        const model = new Model();
        for (const op of ops) {
          await apply(mem, model, op);
          assert.deepEqual(slugs(mem), model.due(), `after ${JSON.stringify(op)}`);
        }
        for (const slug of model.due()) await mem.wiki.read(slug);
        assert.deepEqual(slugs(mem), model.due());
      } finally {
        await mem.close();
      }
    }),
    { numRuns: 80 },
  );
});

void test('a confidence set by hand marks the entity page stale, and the next read shows it', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const [likes] = await mem.memory.addTriples([fact('Bob', 'likes', 'jazz')], 'user');
  await mem.memory.addTriples([fact('Bob', 'plays', 'bass')], 'user');
  assert.match((await mem.wiki.read('bob')).body.map((s) => s.text).join('\n'), /Bob likes jazz \(confidence 0\.\d\d\)/);
  assert.equal(mem.wiki.list()[0]!.stale, false);
  await mem.memory.parts.knowledge.setConfidence(likes!.id, 0.2);
  assert.equal(mem.wiki.list()[0]!.stale, true);
  assert.match((await mem.wiki.read('bob')).body.map((s) => s.text).join('\n'), /Bob likes jazz \(confidence 0\.20\)/);
});

void test('pages are built from facts and notes: an episode mentioning the entity is not a statement (issue 9 item 14)', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  await mem.memory.addTriples([fact('Dora', 'plays', 'chess'), fact('Dora', 'lives in', 'Linz')], 'user');
  const note = await mem.memory.remember('Dora lent me her chess clock.');
  await mem.memory.parts.episodes.addEpisode({ sessionId: 's', summary: 'User: hi. Assistant: hello. User: Dora says hi. Assistant: say hi to Dora.', reason: 'session_end', summariser: 'extractive', messageCount: 4, startedAt: null, endedAt: null });
  const page = await mem.wiki.read('dora');
  assert.equal(page.body.length, 3);
  assert.ok(page.body.some((s) => s.sources.includes(note.id)));
  assert.ok(page.source_ids.every((id) => !id.startsWith('ep_')));
});
