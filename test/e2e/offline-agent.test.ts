// Black box: the built brain with no API key (the default chain: the embedded local agent), driven by
// the built CLI. Facts are told the way people tell them, then asked back the way people ask; each
// statement also leaves a triple in the knowledge graph with its turn as source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startBrain, SVC, type BrainProcess } from '../helpers/brain-process';
import { connect } from '../helpers/session-client';
import type { KnowledgeResult, SearchResponse } from '../../protocol/memory';

function svc(brain: BrainProcess, message: string): string {
  const r = spawnSync(process.execPath, [SVC, '--url', brain.url, message], { encoding: 'utf8', env: { ...process.env, SVC_HOME: brain.home, SVC_API_TOKEN: brain.token }, timeout: 30_000 });
  assert.equal(r.status, 0, `svc ${JSON.stringify(message)}: ${r.stderr}`);
  return r.stdout.trim();
}

void test('offline: remember facts, ask them back in everyday phrasings, and find them as knowledge triples', { timeout: 120_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());

  assert.equal(svc(brain, 'remember my wifi password is sunflower-42'), "I'll remember that my wifi password is sunflower-42.");
  assert.equal(svc(brain, 'Remember: the garage code is 4821'), "I'll remember that the garage code is 4821.");
  for (const statement of ["Mum's birthday is on 3 May", 'the bins go out on Tuesday night', 'I put my passport in the top drawer', 'the bicycle pump is in the shed', 'my dog is called Biscuit']) {
    assert.match(svc(brain, statement), /^I'll remember that /, statement);
  }

  const asked: [string, RegExp][] = [
    ['what is my wifi password', /^Your wifi password is sunflower-42\.$/],
    ['what is the garage code?', /^The garage code is 4821\.$/],
    ["when is mum's birthday", /3 May/],
    ['when do the bins go out', /Tuesday night/],
    ['where did I put my passport', /^You put your passport in the top drawer\.$/],
    ["where's the bicycle pump", /in the shed/],
    ["what's my dog called", /^Your dog is called Biscuit\.$/],
    ['garage code?', /my memory has this: The garage code is 4821/],
    ['hello', /What can I do for you\?/],
    ['thanks!', /^You're welcome!$/],
    ['tell me a joke', /svc key add openai/],
  ];
  for (const [question, answer] of asked) assert.match(svc(brain, question), answer, question);

  const kg = (await (await brain.api(`/api/memory/knowledge?subject=${encodeURIComponent("user's dog")}`)).json()) as KnowledgeResult;
  assert.equal(kg.triples.length, 1);
  const dog = kg.triples[0]!;
  assert.deepEqual([dog.subject, dog.predicate, dog.object], ["user's dog", 'is called', 'Biscuit']);
  assert.match(dog.sources[0]?.source ?? '', /^turn:\S+$/, 'the turn that stated it');
  const bins = (await (await brain.api('/api/memory/knowledge?subject=bins')).json()) as KnowledgeResult;
  assert.deepEqual(bins.triples.map((x) => `${x.predicate} ${x.object}`), ['go out on Tuesday night']);
});

/** One session over /v1/session: each message answered in turn, then closed; the id of its episode. */
async function session(brain: BrainProcess, messages: readonly string[]): Promise<string> {
  const c = await connect(brain);
  try {
    const opened = c.next('session_opened');
    c.ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
    const sid = (await opened).session_id;
    for (const text of messages) {
      const answer = c.next('text_response');
      c.ws.send(JSON.stringify({ type: 'text_command', session_id: sid, payload: { text } }));
      await answer;
    }
    const closed = c.next('session_closed');
    c.ws.send(JSON.stringify({ type: 'session_close', session_id: sid, payload: {} }));
    const done = await closed;
    assert.ok(done.type === 'session_closed' && done.payload.episode_id, 'the session wrote an episode');
    return done.payload.episode_id;
  } finally {
    c.ws.close();
  }
}

void test("offline: a session the local agent could only answer with its fallback is kept but not searchable; one it served is", { timeout: 120_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const episodesFound = async (q: string): Promise<string[]> =>
    ((await (await brain.api(`/api/memory/search?q=${encodeURIComponent(q)}`)).json()) as SearchResponse).results.filter((r) => r.tier === 'episode').map((r) => r.id);

  const served = await session(brain, ['remember that the kayak paddle is in the loft', 'where is the kayak paddle']);
  const fallback = await session(brain, ['explain the quantum zebra migration', 'and the zebra migration paperwork?']);

  assert.deepEqual(await episodesFound('kayak'), [served], 'two served exchanges make the episode searchable');
  assert.deepEqual(await episodesFound('zebra'), [], "the local agent's fallback replies are canned: nothing worth finding");
  const listed = (await (await brain.api('/api/memory/episodes')).json()) as { items: { id: string }[] };
  assert.ok(listed.items.some((e) => e.id === fallback), 'the episode is still written and listed');
});
