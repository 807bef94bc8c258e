// The vector half of search against a real OpenAI-compatible server on loopback: background indexing,
// fused ranking, and the degraded answers when the server is slow, failing or gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryFixture } from './memory-fixture';
import { startEmbeddingServer } from './embedding-server';
import { backendReport } from '../../../daemon/memory/backend-report';

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const server = await startEmbeddingServer();
  const mem = memoryFixture({ settings: { embeddings: { base_url: server.url, model: 'hashed-bow', query_timeout_ms: 200, min_similarity: 0.2 } } });
  for (const p of mem.parts) await p.start?.();
  t.after(async () => {
    await mem.close();
    await server.close();
  });
  return { server, mem };
}

void test('notes are embedded in the background; a query with no shared word finds them by similarity (hybrid)', async (t) => {
  const { mem } = await setup(t);
  const goulash = await mem.memory.remember('Goulash with paprika.');
  await mem.memory.remember('The guest wifi password is sunflower-42.');
  await mem.indexer!.idle();
  assert.equal(mem.vectors!.size, 2);
  const res = await mem.memory.search('recipe', { limit: 5 });
  assert.equal(res.mode, 'hybrid');
  assert.equal(res.degraded, null);
  assert.deepEqual(res.results.map((r) => r.id), [goulash.id]);
  assert.equal(res.results[0]!.signals.lexical, 0);
  assert.ok(res.results[0]!.signals.semantic! >= 0.55);
  const none = await mem.memory.search('volcano documentary', { limit: 5 });
  assert.deepEqual(none.results, []);
  const stored = mem.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM memory_vectors');
  assert.equal(stored?.n, 2);
});

void test('a fact whose confidence changes is not embedded again (its text did not change)', async (t) => {
  const { server, mem } = await setup(t);
  const [fact] = await mem.memory.addTriples([{ subject: 'Bob', predicate: 'plays', object: 'bass' }], 'user');
  await mem.indexer!.idle();
  const before = server.requests;
  await mem.memory.parts.knowledge.setConfidence(fact!.id, 0.3);
  await mem.indexer!.idle();
  assert.equal(server.requests, before);
  await mem.memory.remember('Something else entirely.');
  await mem.indexer!.idle();
  assert.equal(server.requests, before + 1, 'a real change still is');
});

void test('a slow, failing or unreachable embedding server degrades search to lexical with the reason', async (t) => {
  const { server, mem } = await setup(t);
  const note = await mem.memory.remember('Bike lock combination is 7-3-9-1.');
  await mem.indexer!.idle();
  server.mode = 'slow';
  const slow = await mem.memory.search('bike lock', { limit: 5 });
  assert.equal(slow.mode, 'lexical');
  assert.deepEqual(slow.degraded, { component: 'embeddings', reason: 'timeout' });
  assert.deepEqual(slow.results.map((r) => r.id), [note.id]);
  server.mode = 'error';
  const failing = await mem.memory.search('bike lock', { limit: 5 });
  assert.deepEqual(failing.degraded, { component: 'embeddings', reason: 'http_500' });
  assert.deepEqual(failing.results.map((r) => r.id), [note.id]);
  await server.close();
  const gone = await mem.memory.search('bike lock', { limit: 5 });
  assert.deepEqual(gone.degraded, { component: 'embeddings', reason: 'unreachable' });
  assert.deepEqual(gone.results.map((r) => r.id), [note.id]);
});

void test('writes made while the server is down are embedded once it is back (the database is the queue)', async (t) => {
  const { server, mem } = await setup(t);
  server.mode = 'error';
  const note = await mem.memory.remember("Mum's birthday is on 2 August; she likes orchids.");
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(mem.vectors!.has(note.id), false);
  server.mode = 'ok';
  // Instead of waiting out the backoff, a new write kicks the indexer, which drains everything dirty.
  await mem.memory.remember('Another note.');
  await mem.indexer!.idle();
  assert.equal(mem.vectors!.has(note.id), true);
});

void test('while the vector index loads at start-up, search answers lexically and says index_loading; then hybrid', async (t) => {
  const server = await startEmbeddingServer();
  t.after(() => server.close());
  const settings = { embeddings: { base_url: server.url, model: 'hashed-bow', query_timeout_ms: 200, min_similarity: 0.2 } };
  const first = memoryFixture({ settings });
  for (const p of first.parts) await p.start?.();
  const goulash = await first.memory.remember('Goulash with paprika.');
  await first.indexer!.idle();
  await first.close({ keep: true });
  // A restart on the same database: start() returns before the stored vectors are loaded.
  const again = memoryFixture({ settings, dir: first.dir });
  t.after(() => again.close());
  for (const p of again.parts) await p.start?.();
  assert.equal((await backendReport(again, false)).embeddings.index_ready, false);
  const early = await again.memory.search('goulash', { limit: 5 });
  assert.deepEqual({ mode: early.mode, degraded: early.degraded }, { mode: 'lexical', degraded: { component: 'embeddings', reason: 'index_loading' } });
  assert.deepEqual(early.results.map((r) => r.id), [goulash.id]);
  await again.indexer!.idle();
  assert.deepEqual((({ indexed, index_ready }) => ({ indexed, index_ready }))((await backendReport(again, false)).embeddings), { indexed: 1, index_ready: true });
  const later = await again.memory.search('recipe', { limit: 5 });
  assert.deepEqual({ mode: later.mode, degraded: later.degraded, ids: later.results.map((r) => r.id) }, { mode: 'hybrid', degraded: null, ids: [goulash.id] });
});
