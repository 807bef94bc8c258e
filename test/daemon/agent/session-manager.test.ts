// Sessions: turns serialised within a session and concurrent across sessions, several clients on one
// session, the queue bound, ending (episode written, working memory cleared, clients told), resume,
// and memory's SessionPort (read, branch, restore).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AppError } from '../../../daemon/errors';
import { newTurnId } from '../../../daemon/agent/session-manager';
import { SessionBusyError } from '../../../daemon/agent/session';
import { ScriptedProvider, RecordingClient, makeAgent, say, deferred } from './agent-fixtures';

void test('turns of one session run one after another; turns of different sessions overlap', async () => {
  const gates = [deferred(), deferred(), deferred()];
  const log: string[] = [];
  const provider = new ScriptedProvider([
    async (req) => {
      const text = (req.messages.at(-1) as { content: string }).content;
      log.push(`start ${text}`);
      await gates[Number(text.slice(-1))]!.promise;
      log.push(`end ${text}`);
      return say(`answer ${text}`);
    },
  ]);
  const { agent } = makeAgent(provider);
  const a = agent.sessions.open();
  const b = agent.sessions.open();
  const a0 = agent.sessions.submit(a, 'a0', newTurnId());
  const a1 = agent.sessions.submit(a, 'a1', newTurnId());
  const b2 = agent.sessions.submit(b, 'b2', newTurnId());
  for (let i = 0; i < 200 && log.length < 2; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(log.sort(), ['start a0', 'start b2'], 'a1 waits for a0; b2 runs beside it');
  gates[1]!.resolve();
  gates[2]!.resolve();
  await b2;
  gates[0]!.resolve();
  assert.equal((await a0).text, 'answer a0');
  assert.equal((await a1).text, 'answer a1');
  assert.deepEqual(a.history(10).map((h) => h.text), ['a0', 'answer a0', 'a1', 'answer a1']);
});

void test('every client of a session receives its events; the gauge counts sessions with clients', async () => {
  const { agent, metrics } = makeAgent(new ScriptedProvider([() => say('hi both')]));
  const session = agent.sessions.open();
  const [c1, c2] = [new RecordingClient('1'), new RecordingClient('2')];
  agent.sessions.attach(session, c1);
  agent.sessions.attach(session, c2);
  assert.match(await metrics.render(), /svc_ws_active_sessions 1/);
  await agent.sessions.submit(session, 'hello', newTurnId());
  assert.deepEqual(c1.types(), c2.types());
  assert.ok(c1.types().includes('text_response'));
  agent.sessions.detach(session, c1);
  agent.sessions.detach(session, c2);
  assert.match(await metrics.render(), /svc_ws_active_sessions 0/);
});

void test('a flooded session answers BUSY instead of queueing without bound', async () => {
  const gate = deferred();
  const { agent } = makeAgent(new ScriptedProvider([async () => (await gate.promise, say('ok'))]), { settings: { max_queued_turns: 2 } });
  const s = agent.sessions.open();
  const first = [agent.sessions.submit(s, 'one', newTurnId()), agent.sessions.submit(s, 'two', newTurnId())];
  await assert.rejects(agent.sessions.submit(s, 'three', newTurnId()), SessionBusyError);
  gate.resolve();
  await Promise.all(first);
});

void test('ending a session writes its episode, clears working memory and tells its clients', async () => {
  const { agent, memory } = makeAgent(new ScriptedProvider([() => say('Noted.')]));
  const s = agent.sessions.open();
  const client = new RecordingClient();
  agent.sessions.attach(s, client);
  await agent.sessions.submit(s, 'my cat is called Miso', newTurnId());
  s.working.set('fact', 'cat=Miso');
  const episodeId = await agent.sessions.end(s.id, 'closed_by_client');
  assert.equal(memory.episodes.length, 1);
  assert.equal(memory.episodes[0]!.id, episodeId);
  assert.equal(memory.episodes[0]!.session_id, s.id);
  assert.match(memory.episodes[0]!.summary, /Miso/);
  assert.equal(s.working.size, 0);
  const closed = client.frames.at(-1)!;
  assert.ok(closed.type === 'session_closed' && closed.payload.episode_id === episodeId);
  assert.throws(() => agent.sessions.open(s.id), (e: AppError) => e.code === 'NOT_FOUND');
  assert.equal(agent.sessions.stats().open, 0);
});

void test('an empty session ends without an episode; stop() ends every session', async () => {
  const { agent, memory } = makeAgent(new ScriptedProvider([() => say('x')]));
  agent.sessions.open();
  const s2 = agent.sessions.open();
  await agent.sessions.submit(s2, 'hello', newTurnId());
  await agent.stop();
  assert.equal(agent.sessions.stats().open, 0);
  assert.equal(memory.episodes.length, 1);
});

void test('resume by id returns the same session with its history', async () => {
  const { agent } = makeAgent(new ScriptedProvider([() => say('first answer')]));
  const s = agent.sessions.open();
  await agent.sessions.submit(s, 'first', newTurnId());
  const again = agent.sessions.open(s.id);
  assert.equal(again, s);
  assert.deepEqual(again.history(1).map((h) => h.text), ['first answer']);
  assert.throws(() => agent.sessions.open('ses_unknown'), /not found/);
});

void test('SessionPort: read, branch (create) and restore (replace) conversation and working memory', async () => {
  const provider = new ScriptedProvider([() => say('A1'), () => say('A2')]);
  const { agent } = makeAgent(provider);
  const s = agent.sessions.open();
  await agent.sessions.submit(s, 'Q1', newTurnId());
  s.working.set('k', 'v');
  const snap = agent.sessions.read(s.id)!;
  assert.deepEqual(snap.messages, [
    { role: 'user', content: 'Q1' },
    { role: 'assistant', content: 'A1' },
  ]);
  assert.deepEqual(snap.working, [{ key: 'k', value: 'v' }]);
  const branch = agent.sessions.create(snap);
  assert.notEqual(branch, s.id);
  await agent.sessions.submit(s, 'Q2', newTurnId());
  agent.sessions.replace(s.id, snap);
  assert.deepEqual(agent.sessions.read(s.id)!.messages.length, 2);
  assert.equal(agent.sessions.read('nope'), undefined);
  assert.throws(() => agent.sessions.replace('nope', snap), /not found/);
  // The branch carries the conversation into the model's next context.
  await agent.sessions.submit(agent.sessions.get(branch)!, 'Q3', newTurnId());
  assert.deepEqual(provider.requests.at(-1)!.messages.slice(1).map((m) => (m as { content: string }).content), ['Q1', 'A1', 'Q3']);
});
