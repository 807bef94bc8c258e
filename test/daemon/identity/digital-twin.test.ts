// The digital twin answers only from evidence that clears memory search's relevance floor (issue 9
// item 4): a question about the netflix password is not answered with the wifi password.
import { parseSettings } from '../../../daemon/config/load-settings';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { DeviceSummary } from '../../../daemon/kernel/ports';
import { DigitalTwin, deviceStatement } from '../../../daemon/identity/digital-twin';
import { agentMemory } from '../../../daemon/memory/agent-memory';
import { overlap, terms } from '../../../daemon/kernel/text';
import { memoryFixture } from '../memory/memory-fixture';

/** The brain's default (settings memory.search.relevance_floor). */
const FLOOR = parseSettings({}).memory.search.relevance_floor;

const identity = (user: string) => ({ user: () => user, soul: () => '' });

void test('"what is my netflix password?" with only a wifi password known: I don\'t know; the wifi question is answered', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close());
  await mem.memory.remember('The wifi password is sunflower-42');
  const twin = new DigitalTwin(identity('## About\nName: Ada\nWifi password: sunflower-42\n'), agentMemory(mem.memory), { relevanceFloor: FLOOR });
  const netflix = await twin.ask('What is my netflix password?');
  assert.match(netflix.answer, /don't know/);
  assert.ok(netflix.confidence <= 0.1, String(netflix.confidence));
  assert.deepEqual(netflix.evidence, []);
  const wifi = await twin.ask('What is my wifi password?');
  assert.match(wifi.answer, /sunflower-42/);
  assert.ok(wifi.confidence >= 0.6, String(wifi.confidence));
});

void test('the floor is the configured one: a stricter floor turns a partial match into "I don\'t know"', async () => {
  const user = identity('## About\nFavourite food: ramen with extra egg\n');
  assert.match((await new DigitalTwin(user, null, { relevanceFloor: FLOOR }).ask('favourite food at home')).answer, /ramen/);
  assert.match((await new DigitalTwin(user, null, { relevanceFloor: 0.9 }).ask('favourite food at home')).answer, /don't know/);
});

void test('every USER.md line given as evidence holds at least the floor of the question (fast-check)', async () => {
  const vocab = ['garden', 'piano', 'netflix', 'wifi', 'password', 'dentist', 'tuesday', 'ramen', 'sister', 'berlin'];
  const line = fc.uniqueArray(fc.constantFrom(...vocab), { minLength: 1, maxLength: 4 }).map((ws) => ws.join(' '));
  await fc.assert(
    fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 5 }), fc.uniqueArray(fc.constantFrom(...vocab), { minLength: 1, maxLength: 4 }), fc.double({ min: 0.3, max: 0.9, noNaN: true }), async (lines, question, floor) => {
      const twin = new DigitalTwin(identity(`## Notes\n${lines.map((l) => `- ${l}`).join('\n')}`), null, { relevanceFloor: floor });
      const answer = await twin.ask(question.join(' '));
      const q = terms(question.join(' '));
      for (const e of answer.evidence) assert.ok(overlap(q, terms(e.text)) >= floor, `${e.text} for ${question.join(' ')} at ${floor}`);
      if (lines.every((l) => overlap(q, terms(l)) < floor)) assert.match(answer.answer, /don't know/);
    }),
    { numRuns: 150 },
  );
});

void test('device readings are evidence: "what temperature is the hall thermostat?" is answered from its last reading, named device:<id>', async () => {
  const devices = {
    list: (): DeviceSummary[] => [
      { id: 'thermo', name: 'Hall thermostat', kind: 'thermostat', online: true, state: { celsius: 21.5, 'target.c': 22 } },
      { id: 'plug', name: 'Desk plug', kind: 'switch', online: false, state: {} },
    ],
  };
  const twin = new DigitalTwin(identity('## About\nName: Ada\n'), null, { relevanceFloor: FLOOR }, devices);
  const answer = await twin.ask('what does the hall thermostat read');
  assert.deepEqual(answer.evidence, [{ source: 'device:thermo', text: 'Hall thermostat (online) reads celsius 21.5 and target c 22.' }]);
  assert.match(answer.answer, /Hall thermostat \(online\) reads celsius 21\.5/);
  assert.match((await twin.ask('what is my favourite colour')).answer, /don't know/, 'devices do not answer unrelated questions');
  assert.equal(deviceStatement({ id: 'x', name: 'X', kind: 'k', online: true, state: { at: '10:30' } }), 'X (online) reads at 10 30.', 'no colon reaches firstPerson');
});
