// Two built brains on loopback pair with each other (a pairing token of kind brain, completed from a
// pair URL naming the minting brain's loopback address) and sync their notes both ways over /sync:
// what one writes, edits and deletes the other shows; `sync now` reports both caught up; the metrics
// count the live peer. The partition, crash and clock-skew trials are in sync-netns.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SyncNowResult, SyncPeerList, SyncStatus } from '../../protocol/sync-api';
import { startBrain, type BrainProcess } from '../helpers/brain-process';
import { until } from '../helpers/poll';
import { pairBrains } from '../helpers/sync-brains';

interface NoteItem {
  id: string;
  text: string;
}

async function json<T>(brain: BrainProcess, path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const r = await brain.api(path, init);
  return { status: r.status, body: (await r.json()) as T };
}

const notes = async (brain: BrainProcess): Promise<NoteItem[]> => (await json<{ items: NoteItem[] }>(brain, '/api/memory/notes?limit=100')).body.items;

void test('two brains pair over loopback and sync notes, edits and deletes both ways', { timeout: 90_000 }, async (t) => {
  const a = await startBrain();
  t.after(() => a.stop());
  const b = await startBrain();
  t.after(() => b.stop());
  const peer = await pairBrains(a, b);
  const aId = (await json<SyncStatus>(a, '/api/sync/status')).body.brain_id;
  assert.equal(peer.brain_id, aId);

  const fromA = await json<NoteItem>(a, '/api/memory/note', { method: 'POST', body: JSON.stringify({ text: 'the boiler is serviced in March' }) });
  const fromB = await json<NoteItem>(b, '/api/memory/note', { method: 'POST', body: JSON.stringify({ text: 'the cabin key is under the blue pot' }) });
  assert.equal(fromA.status, 201);
  const now = await json<SyncNowResult>(b, '/api/sync/now', { method: 'POST', body: JSON.stringify({ timeout_ms: 20_000 }) });
  assert.equal(now.status, 200);
  assert.deepEqual(now.body.peers.map((p) => p.outcome), ['synced'], JSON.stringify(now.body));
  for (const brain of [a, b]) {
    const texts = (await until(() => 'both notes on both brains', async () => {
      const items = await notes(brain);
      return items.length === 2 ? items : undefined;
    })).map((n) => n.text).sort();
    assert.deepEqual(texts, ['the boiler is serviced in March', 'the cabin key is under the blue pot']);
  }

  // An edit on B and a delete on A travel too.
  assert.equal((await b.api(`/api/memory/notes/${fromA.body.id}`, { method: 'PATCH', body: JSON.stringify({ text: 'the boiler is serviced in April' }) })).status, 200);
  assert.equal((await a.api(`/api/memory/notes/${fromB.body.id}`, { method: 'DELETE' })).status, 200);
  for (const brain of [a, b]) {
    await until(() => 'the edit and the delete on both brains', async () => {
      const items = await notes(brain);
      return items.length === 1 && items[0]!.text === 'the boiler is serviced in April' ? items : undefined;
    });
  }
  const revisions = await json<{ current: { text: string; brain_id: string } }>(a, `/api/memory/notes/${fromA.body.id}/revisions`);
  assert.equal(revisions.status, 200);
  assert.equal(revisions.body.current.text, 'the boiler is serviced in April');

  const peers = await json<SyncPeerList>(a, '/api/sync/peers');
  assert.equal(peers.body.peers.length, 1);
  assert.equal(peers.body.peers[0]!.state, 'connected');
  const metrics = await (await a.api('/metrics')).text();
  assert.match(metrics, /^svc_sync_active_peers 1$/m);
  assert.match(metrics, /^svc_sync_was_active_recent 1$/m);
});
