// Episode summaries from the model when one is configured, extractive otherwise (issue 9 item 17):
// the provider's answer is stored with its id; the local agent, a failure, a timeout or a second
// episode while one is being summarised all give the extractive summary instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryFixture } from './memory-fixture';
import { llmSummariser } from '../../../daemon/memory/llm-summariser';
import type { ChatEvent, ChatRequest } from '../../../daemon/providers/provider';
import type { ChatMessage } from '../../../daemon/kernel/conversation';

const transcript: ChatMessage[] = [
  { role: 'user', content: 'Plan the Croatia holiday: two weeks in Split in August.' },
  { role: 'assistant', content: 'Book the ferry to Hvar early; budget about 2400 euros.' },
  { role: 'user', content: 'Book the ferry then.' },
  { role: 'assistant', content: 'The ferry to Hvar is booked for 3 August.' },
];

const says = (provider: string, text: string) => ({
  requests: [] as ChatRequest[],
  async *chat(req: ChatRequest): AsyncIterable<ChatEvent> {
    this.requests.push(req);
    await Promise.resolve();
    yield { type: 'text_delta', text };
    yield { type: 'done', finish_reason: 'stop', provider, model: 'm' };
  },
});

void test('the model summarises the episode, bounded by max tokens and a timeout; its id is recorded', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const provider = says('openai', 'Planned two weeks in Split in August; ferry to Hvar booked for 3 August, budget 2400 euros.');
  mem.memory.useSummariser(llmSummariser({ provider, maxTokens: 120, timeoutMs: 10_000 }));
  const ep = await mem.memory.recordEpisode({ sessionId: 's', messages: transcript, reason: 'session_end' });
  assert.equal(ep?.summariser, 'openai');
  assert.match(ep.summary, /^Planned two weeks in Split/);
  assert.equal(provider.requests[0]!.maxTokens, 120);
  assert.ok(provider.requests[0]!.signal instanceof AbortSignal);
  assert.match(JSON.stringify(provider.requests[0]!.messages), /ferry to Hvar is booked/);
});

void test('the local agent, a failing provider, a timeout and a busy summariser all fall back to extractive', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  const extractive = async (): Promise<string | undefined> => (await mem.memory.recordEpisode({ sessionId: 's', messages: transcript, reason: 'session_end' }))?.summariser;

  mem.memory.useSummariser(llmSummariser({ provider: says('local', "I'm svc's built-in local agent…") }));
  assert.equal(await extractive(), 'extractive');

  mem.memory.useSummariser(llmSummariser({ provider: { chat: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('HTTP 500')) }) }) } }));
  assert.equal(await extractive(), 'extractive');

  const hang = {
    chat: (req: ChatRequest): AsyncIterable<ChatEvent> => ({
      [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<ChatEvent>>((_, reject) => req.signal!.addEventListener('abort', () => reject(req.signal!.reason as Error))) }),
    }),
  };
  mem.memory.useSummariser(llmSummariser({ provider: hang, timeoutMs: 20 }));
  assert.equal(await extractive(), 'extractive');

  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const slow = {
    async *chat(): AsyncIterable<ChatEvent> {
      await gate;
      yield { type: 'text_delta', text: 'A summary from the model.' };
      yield { type: 'done', finish_reason: 'stop', provider: 'anthropic', model: 'm' };
    },
  };
  mem.memory.useSummariser(llmSummariser({ provider: slow }));
  const first = mem.memory.recordEpisode({ sessionId: 'a', messages: transcript, reason: 'session_end' });
  assert.equal(await extractive(), 'extractive', 'under load: the second episode does not wait for the model');
  release();
  assert.equal((await first)?.summariser, 'anthropic');
});
