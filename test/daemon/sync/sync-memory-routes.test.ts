// A note's revisions (GET /api/memory/notes/:id/revisions) on two real brains: revisionsOf shows the
// op log's merged state — the winner of a concurrent edit, the loser in the history with its brain and
// time, a delete — and the route answers it over app.inject, admin-only, 404 for a note never known.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import type { FastifyPluginAsync } from 'fastify';
import { NoteRevisions } from '../../../protocol/sync-api';
import { revisionsOf, syncMemoryRoutes } from '../../../daemon/sync/sync-memory-routes';
import { auth, testApp } from '../../helpers/app';
import { BRAINS } from '../../sync/sync-fixtures';
import { closeAll, exchange, syncBrain, type SyncBrain } from './sync-brain';

const [A, B] = [BRAINS[0], BRAINS[1]];

async function settle(a: SyncBrain, b: SyncBrain): Promise<void> {
  for (let i = 0; i < 10; i++) if ((await exchange(a, b)) + (await exchange(b, a)) === 0) return;
  assert.fail('the brains did not settle');
}

test('a concurrent edit: the later stamp is current, the other is history with its brain and time', async (t) => {
  const a = syncBrain(A);
  const b = syncBrain(B, { start: 1_750_000_060_000 });
  t.after(() => closeAll(a, b));
  const note = await a.mem.memory.remember('The boiler service is booked for March', { tags: ['home'] });
  const first = revisionsOf(a.mem.store, note.id);
  assert.ok(first);
  assert.ok(Value.Check(NoteRevisions, first), 'the answer matches the wire schema');
  assert.deepEqual({ ...first.current, hlc: undefined }, { text: 'The boiler service is booked for March', source: 'user', tags: ['home'], brain_id: A, at: Number.parseInt(first.current!.hlc.slice(0, 12), 16), hlc: undefined });
  assert.deepEqual(first.history, []);
  assert.equal(first.deleted, false);

  await settle(a, b);
  await a.mem.memory.parts.notes.update(note.id, { text: 'The boiler service is booked for April' });
  await b.mem.memory.parts.notes.update(note.id, { text: 'The boiler service is booked for May' });
  await settle(a, b);
  const ra = revisionsOf(a.mem.store, note.id);
  assert.deepEqual(ra, revisionsOf(b.mem.store, note.id), 'both brains show the same revisions');
  assert.ok(ra?.current);
  // B's clock runs a minute ahead, so its edit carries the later stamp.
  assert.equal(ra.current.text, 'The boiler service is booked for May');
  assert.equal(ra.current.brain_id, B);
  assert.deepEqual(
    ra.history.map((h) => [h.text, h.brain_id]),
    [['The boiler service is booked for April', A]],
  );
  assert.ok(ra.history[0]!.at <= ra.current.at && ra.history[0]!.hlc < ra.current.hlc);
  assert.ok(Value.Check(NoteRevisions, ra));

  await b.mem.memory.forget(note.id);
  await settle(a, b);
  assert.deepEqual(revisionsOf(a.mem.store, note.id), { id: note.id, current: null, history: [], deleted: true }, 'deleting is forgetting: no revision is kept');
});

test('the route answers the revisions, 404 in the error envelope for a note never known, 401 without a token', async (t) => {
  const a = syncBrain(A);
  t.after(() => closeAll(a));
  const { app } = await testApp({ routes: [syncMemoryRoutes(a.mem.store) as unknown as FastifyPluginAsync] });
  t.after(() => app.close());
  const note = await a.mem.memory.remember('The cabin key is under the blue pot');

  const ok = await app.inject({ method: 'GET', url: `/api/memory/notes/${note.id}/revisions`, headers: auth });
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(ok.json(), revisionsOf(a.mem.store, note.id));
  assert.equal(ok.json<NoteRevisions>().current?.text, 'The cabin key is under the blue pot');

  const missing = await app.inject({ method: 'GET', url: '/api/memory/notes/note_000000000000000000000000/revisions', headers: auth });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.json<{ error: { code: string } }>().error.code, 'NOT_FOUND');

  const anonymous = await app.inject({ method: 'GET', url: `/api/memory/notes/${note.id}/revisions` });
  assert.equal(anonymous.statusCode, 401);
});
