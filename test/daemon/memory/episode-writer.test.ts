import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryFixture } from './memory-fixture';
import fc from 'fast-check';
import { exchanges, extractiveSummariser } from '../../../daemon/memory/episode-writer';
import type { ChatMessage } from '../../../daemon/kernel/conversation';

const transcript: ChatMessage[] = [
  { role: 'user', content: 'Help me plan the Croatia holiday. We want two weeks in Split in August.' },
  { role: 'assistant', content: 'Split in August is busy. Book the ferry to Hvar early. The budget for two weeks is around 2400 euros.' },
  { role: 'tool', tool_call_id: 't1', name: 'search', content: 'irrelevant tool output' },
  { role: 'user', content: 'Book the ferry to Hvar then. Thanks!' },
  { role: 'assistant', content: 'Done: the ferry to Hvar is booked for 3 August.' },
];

void test('the extractive summariser keeps the opening request and the sentences carrying the main words', async () => {
  const summary = await extractiveSummariser().summarise(transcript);
  assert.match(summary, /^User: Help me plan the Croatia holiday\./);
  assert.match(summary, /ferry to Hvar/);
  assert.ok(summary.length <= 600);
  assert.doesNotMatch(summary, /irrelevant tool output/);
});

void test('recordEpisode stores a searchable episode; a failing LLM summariser falls back to extractive; empty spans write nothing', async (t) => {
  const mem = memoryFixture({ summariser: { id: 'llm-x', summarise: () => Promise.reject(new Error('provider down')) } });
  t.after(() => mem.close());
  const ep = await mem.memory.recordEpisode({ sessionId: 's1', messages: transcript, reason: 'compaction' });
  assert.ok(ep);
  assert.equal(ep.summariser, 'extractive');
  assert.equal(ep.reason, 'compaction');
  assert.equal(ep.message_count, 5);
  const found = await mem.memory.search('Hvar ferry', { limit: 5 });
  assert.deepEqual(found.results.map((r) => [r.id, r.tier]), [[ep.id, 'episode']]);
  assert.equal(await mem.memory.recordEpisode({ sessionId: 's1', messages: [{ role: 'system', content: 'x' }], reason: 'session_end' }), null);
});

const chat = (...turns: string[]): ChatMessage[] => turns.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content }));
const FALLBACK = 'I\'m svc\'s built-in local agent, and I only understand a few fixed requests (say "help" to see them). I didn\'t understand “book a table for two”. To talk about anything, connect a model.';

void test('one-shot, greeting-only and failed sessions are stored and listed but never searched (issue 9 item 14)', async (t) => {
  const mem = memoryFixture({ cannedReplies: ['I\'m svc\'s built-in local agent, and I only understand a few fixed requests (say "help" to see them). I didn\'t understand “{text}”. To talk about anything, connect a model.', 'That didn\'t work: {summary}'] });
  t.after(() => mem.close());
  const sessions = {
    oneShot: chat('Remember the table at Luigi is booked for Friday.', "I'll remember that the table at Luigi is booked for Friday."),
    greeting: chat('hi', 'Hello! How can I help?', 'thanks', 'You are welcome.'),
    fallback: chat('book a table at Luigi for two', FALLBACK, 'book a table at Luigi', FALLBACK.replace('book a table for two', 'book a table at Luigi')),
    failed: chat('turn on the Luigi lamp', "That didn't work: no device named Luigi lamp", 'turn on the Luigi lamp please', "That didn't work: no device named Luigi lamp"),
  };
  for (const [name, messages] of Object.entries(sessions)) {
    const ep = await mem.memory.recordEpisode({ sessionId: name, messages, reason: 'session_end' });
    assert.ok(ep, name);
    assert.equal(mem.memory.parts.episodes.get(ep.id)?.id, ep.id, `${name} is listed`);
  }
  assert.deepEqual((await mem.memory.search('Luigi', { limit: 10 })).results, []);
  const real = await mem.memory.recordEpisode({ sessionId: 'r', reason: 'session_end', messages: chat('Which wine goes with the Luigi pasta?', 'A Chianti.', 'And for dessert?', 'A Vin Santo with cantucci.') });
  assert.deepEqual((await mem.memory.search('Luigi', { limit: 10 })).results.map((r) => r.id), [real!.id]);
});

void test('exchanges() counts answered requests with content, not greetings or canned replies (fast-check)', () => {
  const canned = (r: string) => r.startsWith('CANNED');
  const turn = fc.record({ user: fc.constantFrom('hi', 'thanks', 'ok', 'book the ferry', 'water the monstera'), reply: fc.constantFrom('CANNED no', 'Sure, done.', '') });
  fc.assert(
    fc.property(fc.array(turn, { maxLength: 8 }), (turns) => {
      const messages = turns.flatMap((x) => chat(x.user, x.reply));
      const expected = turns.filter((x) => !/^(hi|thanks|ok)$/.test(x.user) && x.reply !== '' && !canned(x.reply)).length;
      assert.equal(exchanges(messages, canned), expected);
    }),
  );
});
