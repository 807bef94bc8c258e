// The offline statement rules: what the user states becomes (subject, predicate, object) in their
// own words; questions and commands state nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { statedTriples } from '../../../daemon/agent/statement-rules';

const one = (text: string): string => statedTriples(text).map((t) => `${t.subject} | ${t.predicate} | ${t.object}`).join(' ;; ');

void test('remember-style statements become triples', () => {
  assert.equal(one('remember my wifi password is sunflower-42'), "user's wifi password | is | sunflower-42");
  assert.equal(one('Remember: my dog is called Rex.'), "user's dog | is called | Rex");
  assert.equal(one("mum's birthday is 3 May"), "mum's birthday | is | 3 May");
  assert.equal(one('Mum’s birthday is on 3 May'), "Mum's birthday | is on | 3 May");
  assert.equal(one('the bins go out on Tuesday'), 'bins | go out on | Tuesday');
  assert.equal(one('please remember that the garage code is 4821'), 'garage code | is | 4821');
  assert.equal(one('I put my passport in the top drawer'), "user's passport | is in | the top drawer");
  assert.equal(one('my sister\'s name is Ana'), "user's sister | is called | Ana");
  assert.equal(one('Lena is allergic to peanuts'), 'Lena | is | allergic to peanuts');
  assert.equal(one("I'm allergic to cats"), 'user | is | allergic to cats');
  assert.equal(one('the spare key is under the blue pot'), 'spare key | is under | the blue pot');
});

void test('questions, commands and vague statements yield nothing', () => {
  for (const text of ['what is my wifi password', 'is the garage code 4821?', 'my wifi password is what?', 'turn on the kitchen light', 'it is raining', 'buy stamps', 'hello', '', 'when do the bins go out', 'the meeting with the bank manager about the new mortgage offer is tomorrow'])
    assert.deepEqual(statedTriples(text), [], text);
});

void test('property: never throws; every part is non-empty, bounded, and the object is the user\'s own words', () => {
  const word = fc.constantFrom('my', 'the', 'dog', 'is', 'called', 'Rex', 'remember', 'that', 'bins', 'go', 'out', 'on', 'Tuesday', "mum's", 'in', 'drawer', 'I', 'put', '?', 'are', 'named', 'x'.repeat(300));
  fc.assert(
    fc.property(fc.oneof(fc.array(word, { maxLength: 14 }).map((w) => w.join(' ')), fc.string({ maxLength: 200 })), (text) => {
      for (const t of statedTriples(text)) {
        assert.ok(t.subject !== '' && t.predicate !== '' && t.object !== '');
        assert.ok(t.subject.length <= 200 && t.predicate.length <= 100 && t.object.length <= 500);
        assert.ok(text.replace(/\s+/g, ' ').replace(/[\u2018\u2019]/g, "'").includes(t.object), `${t.object} is from ${text}`);
      }
    }),
  );
});
