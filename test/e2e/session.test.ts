// /v1/session on the built brain (dist/svc.mjs) with a raw `ws` client: malformed frames never
// crash or close the brain, the session gauge follows open sessions, ending a session writes its
// episode, a turn goes through a real provider on the real wire (fake OpenAI server), and SIGTERM
// tells connected clients 1001 and exits 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { connect } from '../helpers/session-client';
import { startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import { startOpenAiServer } from '../fakes/openai-server';

const gauge = async (brain: BrainProcess): Promise<number> => Number(/^svc_ws_active_sessions (\d+)/m.exec(await (await fetch(`${brain.url}/metrics`)).text())?.[1]);

void test('malformed frames are answered and survived; sessions are counted; ending writes an episode', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const c = await connect(brain);
  for (const junk of ['', 'null', '{"type":1}', '{"type":"nope","session_id":"","payload":{}}', '{"type":"text_command"}', '{'.repeat(10_000)]) {
    const err = c.next('error');
    c.ws.send(junk);
    assert.equal((await err).type, 'error');
  }
  assert.equal(c.ws.readyState, WebSocket.OPEN);
  assert.equal(await gauge(brain), 0);

  const opened = c.next('session_opened');
  c.ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  const sid = (await opened).session_id;
  assert.equal(await gauge(brain), 1);
  const answer = c.next('text_response');
  c.ws.send(JSON.stringify({ type: 'text_command', session_id: sid, payload: { text: 'remember that the boiler was serviced in March' } }));
  const r = await answer;
  assert.ok(r.type === 'text_response' && /serviced in March/.test(r.payload.text));
  assert.ok(c.frames.some((f) => f.type === 'stream_delta'));

  const closed = c.next('session_closed');
  c.ws.send(JSON.stringify({ type: 'session_close', session_id: sid, payload: {} }));
  const done = await closed;
  assert.ok(done.type === 'session_closed' && done.payload.episode_id);
  const episodes = (await (await brain.api('/api/memory/episodes')).json()) as { items: { id: string; session_id: string }[] };
  assert.equal(episodes.items[0]?.session_id, sid);
  assert.equal(await gauge(brain), 0);
  assert.equal((await fetch(`${brain.url}/health`)).status, 200);
  c.ws.close();
});

void test('SIGTERM tells connected clients 1001 and the brain exits 0', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const c = await connect(brain);
  const opened = c.next('session_opened');
  c.ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  await opened;
  const code = new Promise<number>((resolve) => c.ws.once('close', (n) => resolve(n)));
  assert.equal(await brain.stop(), 0);
  assert.equal(await code, 1001);
});

void test('a turn through a real provider on the wire: the fake OpenAI server calls a tool, then answers', async (t) => {
  const fake = await startOpenAiServer();
  t.after(() => fake.close());
  const home = tempHome();
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ providers: { chain: [{ id: 'openai', kind: 'openai', base_url: fake.baseURL, keyless: true }, { id: 'local', kind: 'local' }] } }));
  const brain = await startBrain({ home });
  t.after(() => brain.kill());
  fake.queue({ kind: 'tool_calls', calls: [{ id: 'call_1', name: 'remember', argumentChunks: ['{"text":', '"the wifi password is on the fridge"}'] }] }, { kind: 'text', chunks: ['Saved ', 'that.'] });
  const r = await brain.api('/api/dashboard/command', { method: 'POST', body: JSON.stringify({ text: 'please remember the wifi password is on the fridge' }) });
  const body = (await r.json()) as { response: string; sources: string[] };
  assert.equal(body.response, 'Saved that.');
  assert.ok(body.sources.some((s) => s.startsWith('note_')));
  const second = fake.requests[1]!.body as { messages: { role: string; content?: string }[]; tools?: unknown[] };
  assert.equal(second.messages.at(-1)?.role, 'tool');
  assert.match(second.messages.at(-1)?.content ?? '', /"status":"ok"/);
  assert.match(second.messages[0]?.content ?? '', /SOUL\.md/);
  assert.ok(Array.isArray(second.tools) && second.tools.length > 0);
});
