// Sessions: turns serialised within a session and concurrent across sessions, several clients on one
// session, the queue bound, ending (episode written, working memory cleared, clients told), resume,
// and memory's SessionPort (read, branch, restore).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AppError } from '../../../daemon/kernel/errors';
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

// ── Limits: what one client can take (docs/protocol.md "Limits") ──────────────────────────────────
const owner = (connection: string, principal = 'admin') => ({ principal, connection });

void test('one connection is refused past its own limit; another connection still opens sessions', () => {
  const { agent } = makeAgent(new ScriptedProvider([() => say('x')]), { settings: { max_sessions_per_connection: 3 } });
  for (let i = 0; i < 3; i++) agent.sessions.open(undefined, owner('c1'));
  assert.throws(
    () => agent.sessions.open(undefined, owner('c1')),
    (e: AppError) => e.code === 'RATE_LIMITED' && (e.details as { scope: string }).scope === 'connection',
  );
  assert.ok(agent.sessions.open(undefined, owner('c2')));
  assert.equal(agent.sessions.stats().open, 4);
});

void test('at the global limit the oldest session without clients or turns ends instead of refusing; attached ones never do', async () => {
  const { agent, memory } = makeAgent(new ScriptedProvider([() => say('ok')]), { settings: { max_sessions: 3 } });
  const attached = agent.sessions.open(undefined, owner('a'));
  agent.sessions.attach(attached, new RecordingClient('a'));
  const old = agent.sessions.open(undefined, owner('b'));
  await agent.sessions.submit(old, 'the oldest idle session', newTurnId());
  const newer = agent.sessions.open(undefined, owner('c'));
  attached.lastActivity = old.lastActivity - 10;
  newer.lastActivity = old.lastActivity + 10;
  const fresh = agent.sessions.open(undefined, owner('d'));
  assert.equal(agent.sessions.get(old.id), undefined, 'the oldest detached idle session made room');
  assert.ok(agent.sessions.get(attached.id) && agent.sessions.get(newer.id) && agent.sessions.get(fresh.id), 'the older attached session stayed');
  for (let i = 0; i < 50 && !memory.episodes.some((e) => e.session_id === old.id); i++) await new Promise((r) => setImmediate(r));
  assert.ok(memory.episodes.some((e) => e.session_id === old.id && e.reason === 'session_end'), 'the evicted session wrote its episode');
  // Every remaining session has a client: nothing may be ended for a newcomer.
  agent.sessions.attach(newer, new RecordingClient('c'));
  agent.sessions.attach(fresh, new RecordingClient('d'));
  assert.throws(() => agent.sessions.open(undefined, owner('e')), (e: AppError) => e.code === 'UNAVAILABLE');
});

void test('a principal at its limit makes room from its own idle sessions, never from another principal', () => {
  const { agent } = makeAgent(new ScriptedProvider([() => say('x')]), { settings: { max_sessions_per_principal: 2 } });
  const other = agent.sessions.open(undefined, owner('x', 'device-1'));
  const a1 = agent.sessions.open(undefined, owner('c1'));
  const a2 = agent.sessions.open(undefined, owner('c2'));
  other.lastActivity = a1.lastActivity - 10;
  a2.lastActivity = a1.lastActivity + 10;
  const a3 = agent.sessions.open(undefined, owner('c3'));
  assert.equal(agent.sessions.get(a1.id), undefined, "admin's own oldest idle session went");
  assert.ok(agent.sessions.get(other.id), "the other principal's older session stayed");
  agent.sessions.attach(a2, new RecordingClient('c2'));
  agent.sessions.attach(a3, new RecordingClient('c3'));
  assert.throws(
    () => agent.sessions.open(undefined, owner('c4')),
    (e: AppError) => e.code === 'RATE_LIMITED' && (e.details as { scope: string }).scope === 'principal',
  );
  assert.ok(agent.sessions.open(undefined, owner('y', 'device-1')), 'another principal is not affected');
});

void test('a session past its transcript cap compacts its oldest entries into an episode and keeps its newest', async () => {
  const { agent, memory } = makeAgent(new ScriptedProvider([() => say('y'.repeat(1000))]), { settings: { session_transcript_bytes: 16 * 1024 } });
  const s = agent.sessions.open();
  for (let i = 0; i < 40; i++) {
    await agent.sessions.submit(s, `message ${i} ${'x'.repeat(1000)}`, newTurnId());
    assert.ok(s.bytes <= 16 * 1024, `after turn ${i}: ${s.bytes} bytes`);
  }
  const compactions = memory.episodes.filter((e) => e.reason === 'compaction');
  assert.ok(compactions.length >= 2, 'shed in chunks, each summarised');
  const summarised = compactions.reduce((n, e) => n + e.message_count, 0);
  assert.equal(summarised + s.transcript.length, 80, 'every entry is either still held or in a compaction episode');
  assert.match(s.history(1)[0]!.text, /^y+$/);
});

void test('the brain-wide byte budget: idle detached sessions end first, then the oldest conversations are compacted', async () => {
  const budget = 1024 * 1024;
  const { agent } = makeAgent(new ScriptedProvider([() => say('ok')]), { settings: { session_memory_bytes: budget, session_transcript_bytes: 256 * 1024, max_sessions: 100 } });
  const big = 'z'.repeat(15_000);
  const attached = Array.from({ length: 4 }, (_, i) => {
    const s = agent.sessions.open(undefined, owner(`live${i}`));
    agent.sessions.attach(s, new RecordingClient(`live${i}`));
    return s;
  });
  const detached = Array.from({ length: 4 }, (_, i) => agent.sessions.open(undefined, owner(`gone${i}`)));
  for (let round = 0; round < 12; round++) {
    for (const s of [...detached, ...attached]) if (!s.ended) await agent.sessions.submit(s, `${round} ${big}`, newTurnId());
    assert.ok(agent.sessions.heldBytes() <= budget, `round ${round}: ${agent.sessions.heldBytes()} bytes held`);
  }
  assert.ok(detached.some((s) => s.ended), 'detached idle sessions were ended for room');
  assert.ok(attached.every((s) => !s.ended), 'no session with a client was ended');
  assert.ok(attached.every((s) => s.history(1).length === 1), 'each attached session still has its latest answer');
});
