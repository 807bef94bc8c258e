// Recall answers of the local agent: the best matching note or fact, said back in the second person;
// never an episode, never anything a hit does not say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { GUESS_MIN_OVERLAP, recallAnswer, secondPerson, type RecallHit } from '../../../../daemon/providers/local/recall-answer';

const hit = (id: string, summary: string, tier = 'note', relevance = 0.8): RecallHit => ({ id, tier, summary, relevance });

void test('the best matching note answers, in the second person; ties add a second; duplicates once', () => {
  const hits = [hit('n1', 'The bins go out on Tuesday night.'), hit('n2', 'My dog is called Biscuit'), hit('k1', "user's dog is called Biscuit", 'knowledge')];
  assert.deepEqual(recallAnswer('when do the bins go out', hits), { text: 'The bins go out on Tuesday night.', ids: ['n1'] });
  assert.deepEqual(recallAnswer("what's my dog called", hits), { text: 'Your dog is called Biscuit.', ids: ['n2'] });
  assert.equal(recallAnswer('where is the passport', hits), null);
  assert.equal(recallAnswer('what is it', hits), null, 'no content words: no answer');
});

void test('episodes never answer: they repeat earlier questions and exchanges', () => {
  assert.equal(recallAnswer('dog name', [hit('e1', "User: what is your dog's name. Assistant: I don't know", 'episode')]), null);
});

void test('a guess needs more of the question than an explicit recall question', () => {
  const hits = [hit('n1', 'Lena is allergic to peanuts')];
  assert.notEqual(recallAnswer('lena food', hits), null, 'half the words: enough for a recall question');
  assert.equal(recallAnswer('lena food', hits, GUESS_MIN_OVERLAP), null, 'but not for a guess');
});

void test('secondPerson swaps first-person words only', () => {
  assert.equal(secondPerson('I put my passport in the drawer'), 'You put your passport in the drawer.');
  assert.equal(secondPerson("I'm allergic to cats; mine is the red one."), "You're allergic to cats; yours is the red one.");
  assert.equal(secondPerson('Mum’s birthday is on 3 May'), 'Mum’s birthday is on 3 May.');
  assert.equal(secondPerson('Tim is myopic'), 'Tim is myopic.');
});

void test('property: an answer is made only of hits that are notes or facts, and a higher bar gives the same answer or none', () => {
  const word = fc.constantFrom('dog', 'bins', 'passport', 'garage', 'code', 'tuesday', 'drawer', 'my', 'the', 'is', 'called');
  const text = fc.array(word, { minLength: 1, maxLength: 8 }).map((w) => w.join(' '));
  const tier = fc.constantFrom('note', 'knowledge', 'episode');
  const hits = fc.array(fc.record({ id: fc.uuid(), tier, summary: text, relevance: fc.double({ min: 0, max: 1, noNaN: true }) }), { maxLength: 8 });
  fc.assert(
    fc.property(text, hits, fc.double({ min: 0, max: 1, noNaN: true }), (q, hs, bar) => {
      const a = recallAnswer(q, hs, bar);
      if (a === null) return;
      for (const id of a.ids) assert.notEqual(hs.find((h) => h.id === id)?.tier, 'episode');
      assert.ok(a.ids.length >= 1 && a.ids.length <= 2);
      const stricter = recallAnswer(q, hs, Math.min(1, bar + 0.25));
      if (stricter) assert.deepEqual(stricter, a, 'a higher bar keeps the same best answer or none');
    }),
  );
});

void test('a fact extracted from a note does not repeat it', () => {
  const hits = [hit('k1', 'garage code is 4821', 'knowledge', 0.9), hit('n1', 'The garage code is 4821', 'note', 0.5)];
  assert.deepEqual(recallAnswer('what is the garage code', hits), { text: 'The garage code is 4821.', ids: ['n1'] });
});
