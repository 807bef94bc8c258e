// Black box: the built brain with no API key (the default chain: the embedded local agent), driven by
// the built CLI. Facts are told the way people tell them, then asked back the way people ask; each
// statement also leaves a triple in the knowledge graph with its turn as source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startBrain, SVC, type BrainProcess } from '../helpers/brain-process';
import type { KnowledgeResult } from '../../protocol/memory';

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
