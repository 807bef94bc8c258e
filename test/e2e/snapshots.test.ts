// Session snapshots on the built brain are taken from the agent's live sessions (not a stand-in):
// a remembered turn is in the snapshot, and a branch opens over /v1/session with that history.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startBrain } from '../helpers/brain-process';
import { connect } from '../helpers/session-client';

test('snapshot a live session, branch it, and open the branch with its history', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const c = await connect(brain);
  t.after(() => c.ws.close());
  const opened = c.next('session_opened');
  c.ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  const sid = (await opened).session_id;
  const answer = c.next('text_response');
  c.ws.send(JSON.stringify({ type: 'text_command', session_id: sid, payload: { text: 'remember that the bike lock code is 4711' } }));
  await answer;

  const snap = await brain.api('/api/memory/snapshots', { method: 'POST', body: JSON.stringify({ session_id: sid, label: 'before trip' }) });
  assert.equal(snap.status, 201);
  const snapshot = (await snap.json()) as { id: string; message_count: number };
  assert.ok(snapshot.message_count >= 2, `snapshot holds the turn (${snapshot.message_count} messages)`);

  const unknown = await brain.api('/api/memory/snapshots', { method: 'POST', body: JSON.stringify({ session_id: 'ses_not_open' }) });
  assert.equal(unknown.status, 404);

  const branch = await brain.api(`/api/memory/snapshots/${snapshot.id}/branch`, { method: 'POST' });
  assert.equal(branch.status, 201);
  const branched = (await branch.json()) as { session_id: string };
  assert.notEqual(branched.session_id, sid);

  const reopened = c.next('session_opened');
  c.ws.send(JSON.stringify({ type: 'session_open', session_id: branched.session_id, payload: {} }));
  const history = (await reopened) as { payload: { resumed: boolean; history: { text: string }[] } };
  assert.equal(history.payload.resumed, true);
  assert.ok(history.payload.history.some((h) => /4711/.test(h.text)), 'the branch carries the conversation');
});
