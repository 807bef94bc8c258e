import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp, auth } from '../../helpers/app';
import { memoryRoutes } from '../../../daemon/http/memory-routes';
import { InMemorySessions } from '../../../daemon/memory/session-port';
import { WorkingMemory } from '../../../daemon/memory/working-memory';
import { memoryFixture } from '../memory/memory-fixture';
import type { DecayReport, SessionRef, Snapshot, SnapshotDetail, WikiList, WikiPage, WikiRebuild, BackendReport } from '../../../protocol/memory';

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const sessions = new InMemorySessions();
  const mem = memoryFixture({ sessions });
  const { app } = await testApp({ routes: [memoryRoutes(mem)] });
  t.after(async () => {
    await app.close();
    await mem.close();
  });
  return { app, mem, sessions };
}

void test('snapshot a session, branch a new one from it, restore the original after it moved on', async (t) => {
  const { app, sessions } = await setup(t);
  const wm = new WorkingMemory();
  wm.set('city', 'Lisbon');
  wm.set('budget', '2400');
  sessions.put('s1', { messages: [{ role: 'user', content: 'Plan Lisbon' }, { role: 'assistant', content: 'Sure.' }], working: wm.entries() });
  const snap = await app.inject({ method: 'POST', url: '/api/memory/snapshots', headers: auth, payload: { session_id: 's1', label: 'before budget talk' } });
  assert.equal(snap.statusCode, 201);
  const s = snap.json<Snapshot>();
  assert.equal(s.message_count, 2);
  assert.equal(s.working_count, 2);
  sessions.put('s1', { messages: [{ role: 'user', content: 'Actually Porto' }], working: [] });
  const branch = await app.inject({ method: 'POST', url: `/api/memory/snapshots/${s.id}/branch`, headers: auth });
  assert.equal(branch.statusCode, 201);
  const ref = branch.json<SessionRef>();
  assert.notEqual(ref.session_id, 's1');
  assert.equal(sessions.read(ref.session_id)!.messages[0]!.content, 'Plan Lisbon');
  assert.equal(sessions.read('s1')!.messages[0]!.content, 'Actually Porto');
  const restore = await app.inject({ method: 'POST', url: `/api/memory/snapshots/${s.id}/restore`, headers: auth, payload: {} });
  assert.equal(restore.statusCode, 200);
  const restored = sessions.read('s1')!;
  assert.equal(restored.messages.length, 2);
  const again = new WorkingMemory();
  again.restore(restored.working);
  assert.deepEqual(again.entries(), wm.entries());
  const detail = (await app.inject({ method: 'GET', url: `/api/memory/snapshots/${s.id}`, headers: auth })).json<SnapshotDetail>();
  assert.equal(detail.label, 'before budget talk');
  assert.equal((await app.inject({ method: 'POST', url: '/api/memory/snapshots', headers: auth, payload: { session_id: 'nope' } })).statusCode, 404);
  assert.equal((await app.inject({ method: 'POST', url: '/api/memory/snapshots/snap_x/branch', headers: auth })).statusCode, 404);
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/memory/snapshots/${s.id}`, headers: auth })).statusCode, 200);
});

void test('wiki pages carry provenance and update when a source is deleted', async (t) => {
  const { app, mem } = await setup(t);
  const note = await mem.memory.remember('Alice is learning the cello with Mrs Novak.', { tags: ['music'] });
  const [t1, t2] = await mem.memory.addTriples(
    [{ subject: 'Alice', predicate: 'sister of', object: 'Bob' }, { subject: 'Alice', predicate: 'lives in', object: 'Graz' }, { subject: 'Alice', predicate: 'plays', object: 'the cello' }],
    `note:${note.id}`,
  );
  const rebuilt = (await app.inject({ method: 'POST', url: '/api/memory/wiki/rebuild', headers: auth })).json<WikiRebuild>();
  assert.equal(rebuilt.pages, 2);
  const list = (await app.inject({ method: 'GET', url: '/api/memory/wiki', headers: auth })).json<WikiList>();
  assert.deepEqual(list.items.map((p) => p.slug).sort(), ['alice', 'topic-music']);
  const page = (await app.inject({ method: 'GET', url: '/api/memory/wiki/alice', headers: auth })).json<WikiPage>();
  for (const s of page.body) assert.ok(s.sources.length > 0);
  assert.ok(page.body.some((s) => s.sources.includes(t1!.id) && s.sources.includes(note.id)));
  assert.ok(page.body.some((s) => s.text.includes('cello') && s.sources.includes(note.id)));
  await mem.memory.forget(t2!.id);
  await new Promise((r) => setImmediate(r));
  assert.equal((await app.inject({ method: 'GET', url: '/api/memory/wiki', headers: auth })).json<WikiList>().items.find((p) => p.slug === 'alice')!.stale, true);
  const after = (await app.inject({ method: 'GET', url: '/api/memory/wiki/alice', headers: auth })).json<WikiPage>();
  assert.equal(after.stale, false);
  assert.ok(!after.source_ids.includes(t2!.id));
  assert.ok(!after.body.some((s) => s.text.includes('Graz')));
  assert.equal((await app.inject({ method: 'GET', url: '/api/memory/wiki/nobody', headers: auth })).statusCode, 404);

  // A new note that mentions the entity, or carries the topic's tag, reaches those pages on the next read.
  const mention = await mem.memory.remember('Bought new strings for ALICE before Friday.');
  const tagged = await mem.memory.remember('Concert tickets for the school orchestra.', { tags: ['music'] });
  await new Promise((r) => setImmediate(r));
  const stale = (await app.inject({ method: 'GET', url: '/api/memory/wiki', headers: auth })).json<WikiList>().items;
  assert.deepEqual(stale.filter((p) => p.stale).map((p) => p.slug).sort(), ['alice', 'topic-music']);
  const alice = (await app.inject({ method: 'GET', url: '/api/memory/wiki/alice', headers: auth })).json<WikiPage>();
  assert.ok(alice.body.some((s) => s.sources.includes(mention.id)));
  const music = (await app.inject({ method: 'GET', url: '/api/memory/wiki/topic-music', headers: auth })).json<WikiPage>();
  assert.ok(music.body.some((s) => s.sources.includes(tagged.id)));
});

void test('decay: show the curve and distribution, tune it, reject bad values; backend report', async (t) => {
  const { app, mem } = await setup(t);
  await mem.memory.remember('something to decay');
  const shown = (await app.inject({ method: 'GET', url: '/api/memory/decay', headers: auth })).json<DecayReport>();
  assert.equal(shown.params.half_life_days, 90);
  assert.equal(shown.retention.items, 1);
  const day90 = shown.curve.find((c) => c.days === 90 && c.recalls === 0)!;
  assert.equal(day90.retention, 0.5);
  const day90rehearsed = shown.curve.find((c) => c.days === 90 && c.recalls === 1)!;
  assert.ok(day90rehearsed.retention > day90.retention);
  const tuned = (await app.inject({ method: 'PATCH', url: '/api/memory/decay', headers: auth, payload: { half_life_days: 30 } })).json<DecayReport>();
  assert.equal(tuned.params.half_life_days, 30);
  assert.equal(mem.decay.get().half_life_days, 30);
  assert.equal((await app.inject({ method: 'PATCH', url: '/api/memory/decay', headers: auth, payload: { weight: 2 } })).statusCode, 400);
  assert.equal((await app.inject({ method: 'PATCH', url: '/api/memory/decay', headers: auth, payload: {} })).statusCode, 400);
  const backend = (await app.inject({ method: 'GET', url: '/api/memory/backend', headers: auth })).json<BackendReport>();
  assert.equal(backend.counts.notes, 1);
  assert.equal(backend.embeddings.configured, false);
});

void test('restore takes an optional body: none at all, or an empty one sent with content-type application/json; DELETE with that header and no body', async (t) => {
  const { app, sessions } = await setup(t);
  sessions.put('s1', { messages: [{ role: 'user', content: 'Plan Lisbon' }], working: [] });
  const s = (await app.inject({ method: 'POST', url: '/api/memory/snapshots', headers: auth, payload: { session_id: 's1' } })).json<Snapshot>();
  sessions.put('s1', { messages: [], working: [] });
  const json = { ...auth, 'content-type': 'application/json' };
  const bare = await app.inject({ method: 'POST', url: `/api/memory/snapshots/${s.id}/restore`, headers: auth });
  assert.equal(bare.statusCode, 200);
  assert.equal(sessions.read('s1')!.messages.length, 1);
  const emptyJson = await app.inject({ method: 'POST', url: `/api/memory/snapshots/${s.id}/restore`, headers: json, payload: '' });
  assert.equal(emptyJson.statusCode, 200);
  assert.deepEqual(emptyJson.json<SessionRef>(), { session_id: 's1', snapshot_id: s.id });
  const branch = await app.inject({ method: 'POST', url: `/api/memory/snapshots/${s.id}/branch`, headers: json, payload: '' });
  assert.equal(branch.statusCode, 201);
  const del = await app.inject({ method: 'DELETE', url: `/api/memory/snapshots/${s.id}`, headers: json, payload: '' });
  assert.equal(del.statusCode, 200);
});

void test('decay and backend: a boolean sent as a string is a 400 in a body, a flag in a query string; a non-finite number is refused', async (t) => {
  const { app, mem } = await setup(t);
  const json = { ...auth, 'content-type': 'application/json' };
  for (const payload of ['{"enabled":"false"}', '{"half_life_days":"30"}', '{"weight":1e309}']) {
    const r = await app.inject({ method: 'PATCH', url: '/api/memory/decay', headers: json, payload });
    assert.equal(r.statusCode, 400, payload);
  }
  assert.equal(mem.decay.get().enabled, true, 'nothing changed');
  const off = await app.inject({ method: 'PATCH', url: '/api/memory/decay', headers: json, payload: '{"enabled":false}' });
  assert.equal(off.json<DecayReport>().params.enabled, false);
  assert.equal((await app.inject({ method: 'GET', url: '/api/memory/backend?probe=false', headers: auth })).statusCode, 200);
  assert.equal((await app.inject({ method: 'GET', url: '/api/memory/backend?probe=maybe', headers: auth })).statusCode, 400);
});
