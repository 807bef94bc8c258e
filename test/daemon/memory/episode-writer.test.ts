import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryFixture } from './memory-fixture';
import { extractiveSummariser } from '../../../daemon/memory/episode-writer';
import type { ChatMessage } from '../../../daemon/providers/provider';

const transcript: ChatMessage[] = [
  { role: 'user', content: 'Help me plan the Croatia holiday. We want two weeks in Split in August.' },
  { role: 'assistant', content: 'Split in August is busy. Book the ferry to Hvar early. The budget for two weeks is around 2400 euros.' },
  { role: 'tool', tool_call_id: 't1', name: 'search', content: 'irrelevant tool output' },
  { role: 'user', content: 'Book the ferry to Hvar then. Thanks!' },
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
  assert.equal(ep.message_count, 4);
  const found = await mem.memory.search('Hvar ferry', { limit: 5 });
  assert.deepEqual(found.results.map((r) => [r.id, r.tier]), [[ep.id, 'episode']]);
  assert.equal(await mem.memory.recordEpisode({ sessionId: 's1', messages: [{ role: 'system', content: 'x' }], reason: 'session_end' }), null);
});
