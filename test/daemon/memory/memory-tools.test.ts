// daemon/agent/tools/memory-tools.ts search_memory: what the assistant says (the tool's summary) and
// what it hands on (data, sources, ui), against an AgentMemory holding given hits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryTools } from '../../../daemon/memory/memory-tools';
import type { AgentMemory, MemoryHit } from '../../../daemon/kernel/ports';
import type { ToolContext } from '../../../daemon/kernel/tool';

const ctx: ToolContext = { sessionId: 'ses_1', turnId: 't1', specialist: 'general', signal: new AbortController().signal };

function searchTool(hits: MemoryHit[]) {
  const memory: AgentMemory = {
    remember: () => Promise.reject(new Error('not used')),
    search: (_q, limit) => Promise.resolve(hits.slice(0, limit)),
    forget: () => Promise.resolve([]),
    knowledge: () => Promise.resolve([]),
    addFacts: () => Promise.reject(new Error('not used')),
  };
  const tool = memoryTools(memory).find((t) => t.spec.name === 'search_memory');
  assert.ok(tool);
  return tool;
}

const note: MemoryHit = { id: 'note_1', tier: 'note', summary: 'The bins go out on tuesday.', relevance: 0.9 };
const fact: MemoryHit = { id: 'kg_1', tier: 'knowledge', summary: 'bins collected-on tuesday', relevance: 0.8 };
const episode: MemoryHit = { id: 'ep_1', tier: 'episode', summary: "User: remember that the bins go out on tuesday. Assistant: I'll remember that.", relevance: 0.85 };

void test('search_memory speaks notes and facts, not the conversation that stored them; data keeps every hit', async () => {
  const result = await searchTool([note, episode, fact]).run({ query: 'bins' }, ctx);
  assert.equal(result.summary, 'Here is what I know about bins: The bins go out on tuesday; bins collected-on tuesday.');
  assert.deepEqual(result.sources, ['note_1', 'ep_1', 'kg_1']);
});

void test('search_memory falls back to episodes, said as such, when nothing else matches', async () => {
  const result = await searchTool([episode]).run({ query: 'bins' }, ctx);
  assert.match(result.summary, /^From our past conversations about bins: User: remember/);
});

void test('search_memory with no hit says so', async () => {
  const result = await searchTool([]).run({ query: 'volcanoes' }, ctx);
  assert.equal(result.summary, "I don't have anything about volcanoes in memory.");
});

void test('remember refuses text a model sent with U+0000 or other control characters, and stores nothing', async () => {
  const stored: string[] = [];
  const memory: AgentMemory = {
    remember: (text) => {
      stored.push(text);
      return Promise.resolve({ id: 'note_1', text });
    },
    search: () => Promise.resolve([]),
    forget: () => Promise.resolve([]),
    knowledge: () => Promise.resolve([]),
    addFacts: () => Promise.resolve([]),
  };
  const remember = memoryTools(memory).find((t) => t.spec.name === 'remember')!;
  for (const text of ['my pin is 1234\u0000 and more', 'bell\u0007', 'lone \ud800 surrogate']) {
    await assert.rejects(remember.run({ text }, ctx), { name: 'ToolFailure' }, JSON.stringify(text));
  }
  assert.deepEqual(stored, []);
  await remember.run({ text: 'Multi-line\tnotes\nare fine 🙂' }, ctx);
  assert.equal(stored.length, 1);
});
