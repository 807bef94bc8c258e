// Knowledge extraction of a turn: offline rules into a real SQLite knowledge graph with the turn as
// source; with a model, one bounded structured call on the real OpenAI wire (fake server on
// loopback) — skipped under load, replaced by the rules on failure, aborted on stop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KnowledgeExtractor, EXTRACTION_PROMPT, parseModelFacts } from '../../../daemon/agent/knowledge-extractor';
import type { AgentEvent } from '../../../daemon/agent/agent-events';
import { EventBus } from '../../../daemon/kernel/event-bus';
import { agentMemory } from '../../../daemon/memory/agent-memory';
import { OpenAiProvider } from '../../../daemon/providers/openai-provider';
import { LocalProvider } from '../../../daemon/providers/local/local-provider';
import type { Provider } from '../../../daemon/providers/provider';
import { openAiErrors, startOpenAiServer, textReply, type FakeServer } from '../../fakes/openai-server';
import { memoryFixture, type MemoryFixture } from '../memory/memory-fixture';
import { silent } from './agent-fixtures';

interface World {
  mem: MemoryFixture;
  fake: FakeServer;
  events: AgentEvent[];
  extractor: (provider?: Provider, timeoutMs?: number) => KnowledgeExtractor;
}

async function world(t: { after: (fn: () => Promise<void>) => void }): Promise<World> {
  const mem = memoryFixture();
  const fake = await startOpenAiServer();
  t.after(async () => {
    await fake.close();
    await mem.close();
  });
  const events: AgentEvent[] = [];
  const bus = EventBus.logged<AgentEvent>(silent, 'agent event');
  bus.on('test', (e) => events.push(e));
  const model = new OpenAiProvider({ id: 'oai', baseURL: fake.baseURL, apiKey: 'sk-test-0123456789', keyLabel: 'main', model: () => 'gpt-fake-mini', timeouts: { firstTokenMs: 60_000, idleMs: 60_000 } });
  return {
    mem,
    fake,
    events,
    extractor: (provider = model, timeoutMs = 60_000) => new KnowledgeExtractor({ memory: agentMemory(mem.memory), provider, events: bus, logger: silent, limits: { timeoutMs, maxTokens: 300 } }),
  };
}

const facts = (mem: MemoryFixture) => mem.memory.knowledge({ limit: 50, depth: 0 }).triples.map((t) => `${t.subject} | ${t.predicate} | ${t.object} @ ${t.sources.map((s) => s.source).join(',')}`);
const turn = (text: string, othersRunning = 0) => ({ sessionId: 'ses_1', turnId: 'turn_abc', text, othersRunning });

void test('offline: the rules store the stated fact with the turn as its source before fromTurn resolves', async (t) => {
  const w = await world(t);
  const x = w.extractor(new LocalProvider());
  assert.equal(await x.fromTurn(turn('remember my wifi password is sunflower-42')), 'rules');
  assert.deepEqual(facts(w.mem), ["user's wifi password | is | sunflower-42 @ turn:turn_abc"]);
  assert.equal(await x.fromTurn(turn('what is my wifi password?')), 'none');
  assert.equal(w.fake.requests.length, 0);
});

void test('with a model: one bounded structured call; its triples are stored with the turn as source', async (t) => {
  const w = await world(t);
  w.fake.reply(() => textReply('```json\n{"triples":[{"subject":"user\'s dog","predicate":"is called","object":"Rex"},', '{"subject":"Rex","predicate":"is a","object":"beagle"}]}\n```'));
  const x = w.extractor();
  assert.equal(await x.fromTurn(turn('my dog Rex is a beagle')), 'model');
  await x.idle();
  assert.deepEqual(facts(w.mem).sort(), ['Rex | is a | beagle @ turn:turn_abc', "user's dog | is called | Rex @ turn:turn_abc"]);
  const body = w.fake.requests[0]!.body!;
  assert.equal(body.max_tokens, 300);
  assert.deepEqual((body.messages as { role: string; content: string }[]).map((m) => m.role), ['system', 'user']);
  assert.equal((body.messages as { content: string }[])[0]!.content, EXTRACTION_PROMPT);
  assert.equal(body.tools, undefined);
  const ev = w.events.find((e) => e.type === 'knowledge_extracted');
  assert.ok(ev && ev.type === 'knowledge_extracted' && ev.via === 'model' && ev.facts.length === 2);
});

void test('under load no call is made: the rules answer', async (t) => {
  const w = await world(t);
  const x = w.extractor();
  assert.equal(await x.fromTurn(turn('the garage code is 4821', 2)), 'rules');
  assert.equal(w.fake.requests.length, 0);
  assert.deepEqual(facts(w.mem), ['garage code | is | 4821 @ turn:turn_abc']);
});

void test('a failed or unusable extraction call falls back to the rules', async (t) => {
  const w = await world(t);
  const x = w.extractor();
  w.fake.queue(openAiErrors.overloaded(), textReply('Sure! The user has a dog.'));
  await x.fromTurn(turn('the bins go out on Tuesday'));
  await x.idle();
  await x.fromTurn({ ...turn('my dog is called Rex'), turnId: 'turn_two' });
  await x.idle();
  assert.deepEqual(facts(w.mem).sort(), ['bins | go out on | Tuesday @ turn:turn_abc', "user's dog | is called | Rex @ turn:turn_two"]);
  assert.equal(w.fake.requests.length, 2, 'one call each, no retry');
});

void test('a stalled call is bounded: the timeout ends it, and stop() aborts one at once', async (t) => {
  const w = await world(t);
  w.fake.reply(() => ({ kind: 'stall' }));
  const quick = w.extractor(undefined, 50);
  await quick.fromTurn(turn('the garage code is 4821'));
  await quick.idle();
  assert.deepEqual(facts(w.mem), ['garage code | is | 4821 @ turn:turn_abc']);
  const slow = w.extractor();
  assert.equal(await slow.fromTurn({ ...turn('my dog is called Rex'), turnId: 'turn_two' }), 'model');
  assert.equal(await slow.fromTurn({ ...turn('mum\'s birthday is 3 May'), turnId: 'turn_three' }), 'rules', 'one extraction call at a time');
  await slow.stop();
  assert.equal(facts(w.mem).length, 3);
});

void test('parseModelFacts takes JSON only, bounded', () => {
  assert.equal(parseModelFacts('no json here'), null);
  assert.equal(parseModelFacts('{"triples": "x"}'), null);
  assert.equal(parseModelFacts('{not json}'), null);
  const many = JSON.stringify({ triples: Array.from({ length: 20 }, (_, i) => ({ subject: `s${i}`, predicate: 'p', object: 'o' })) });
  assert.equal(parseModelFacts(many)?.length, 8);
  assert.deepEqual(parseModelFacts('{"triples":[{"subject":" ","predicate":"p","object":"o"}]}'), []);
});
