// "Forget" on the built brain (issue 9 items 3 and 15), black box over /v1/session and the API: a
// secret told in chat and then forgotten is found by no search, kept by no episode (the one holding
// the forget exchange included) and not given by the twin; the same sentence remembered twice is one note.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '../helpers/session-client';
import { startBrain } from '../helpers/brain-process';
import type { EpisodePage, Note, SearchResponse } from '../../protocol/memory';

void test('a secret remembered in chat and then forgotten is gone from search, episodes and the twin', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const c = await connect(brain);
  t.after(() => c.ws.close());
  const opened = c.next('session_opened');
  c.ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  const sid = (await opened).session_id;
  const say = async (text: string): Promise<string> => {
    const answer = c.next('text_response');
    c.ws.send(JSON.stringify({ type: 'text_command', session_id: sid, payload: { text } }));
    const r = await answer;
    assert.ok(r.type === 'text_response');
    return r.payload.text;
  };
  assert.match(await say('remember that my wifi password is hunter2'), /hunter2/);
  assert.match(await say('remember that the bins go out on Tuesday'), /bins/);
  assert.match(await say('remember that the bins go out on Tuesday.'), /bins/);
  assert.match(await say('forget the password'), /Forgotten: .*hunter2/);
  const closed = c.next('session_closed');
  c.ws.send(JSON.stringify({ type: 'session_close', session_id: sid, payload: {} }));
  await closed;

  const search = async (q: string) => ((await (await brain.api(`/api/memory/search?q=${encodeURIComponent(q)}&limit=50`)).json()) as SearchResponse).results;
  for (const q of ['hunter2', 'wifi password', 'password', 'what is my wifi password']) assert.deepEqual((await search(q)).filter((r) => /hunter2/.test(r.summary)), [], q);
  const episodes = (await (await brain.api('/api/memory/episodes')).json()) as EpisodePage;
  assert.equal(episodes.items.length, 1);
  assert.doesNotMatch(episodes.items[0]!.summary, /hunter2/);
  const twin = (await (await brain.api('/api/identity/twin/ask', { method: 'POST', body: JSON.stringify({ question: 'what is my wifi password?' }) })).json()) as { answer: string; evidence: { text: string }[] };
  assert.doesNotMatch(JSON.stringify(twin), /hunter2/);

  const notes = (await (await brain.api('/api/memory/notes')).json()) as { items: Note[] };
  assert.deepEqual(notes.items.map((n) => n.text), ['the bins go out on Tuesday']);
  assert.equal(notes.items[0]!.recall.count >= 1, true);
});
