// Sentence templates: the syntax, whole-utterance matching, slots keeping their case, and a property
// that no input ever throws and a slot captures exactly what was said.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SentenceMatcher, compileSentence } from '../../../../daemon/providers/local/sentence-matcher';

const matcher = new SentenceMatcher([
  { intent: 'remember', tool: 'remember', args: { text: '{text}' }, sentences: ['[please] remember [that] {text}'] },
  { intent: 'on', tool: 'set_device', args: { device: '{device}', state: 'on' }, sentences: ['(turn|switch) on [the] {device}', '(turn|switch) [the] {device} on'] },
  { intent: 'devices', tool: 'list_devices', sentences: ['(which|what) devices (are there|do i have)'] },
  { intent: 'help', sentences: ['help'] },
]);

void test('optional words, alternatives and slots', () => {
  assert.deepEqual(matcher.match('Remember that the Spare Key is under the pot.'), { intent: 'remember', tool: 'remember', arguments: { text: 'the Spare Key is under the pot' } });
  assert.deepEqual(matcher.match('please remember milk'), { intent: 'remember', tool: 'remember', arguments: { text: 'milk' } });
  assert.equal(matcher.match('switch the Desk Lamp on')?.arguments.device, 'Desk Lamp');
  assert.equal(matcher.match('turn on lamp')?.arguments.device, 'lamp');
  assert.equal(matcher.match('What devices do I have?')?.intent, 'devices');
  assert.equal(matcher.match('  HELP!! ')?.intent, 'help');
  assert.equal(matcher.match('help me with my taxes'), null, 'whole utterances only');
  assert.equal(matcher.match('remember'), null, 'a slot needs words');
  assert.equal(matcher.match(''), null);
});

void test('bad templates fail at compile time', () => {
  assert.throws(() => compileSentence('remember [that {text}'), /unclosed/);
  assert.throws(() => compileSentence('remember {Text}'), /bad slot/);
  assert.throws(() => compileSentence('remember [] {text}'), /empty/);
});

void test('property: any utterance is safe to match, and a remembered phrase comes back verbatim (whitespace collapsed)', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (s) => {
      matcher.match(s);
    }),
  );
  const word = fc.stringMatching(/^[A-Za-z0-9'-]{1,12}$/).filter((w) => !['that', 'please'].includes(w.toLowerCase()));
  fc.assert(
    fc.property(fc.array(word, { minLength: 1, maxLength: 8 }), (words) => {
      const phrase = words.join(' ');
      assert.equal(matcher.match(`remember   ${phrase}!`)?.arguments.text, phrase);
    }),
  );
});

void test('{utterance} is the whole request, a reply is filled and capitalised, "Word: …" reads as "Word …"', () => {
  const m = new SentenceMatcher([
    { intent: 'greeting', reply: '{utterance}! Hi.', sentences: ['good (morning|evening)'] },
    { intent: 'statement', tool: 'remember', args: { text: '{utterance}' }, sentences: ['my {thing} is {value}'] },
    { intent: 'remember', tool: 'remember', args: { text: '{text}' }, sentences: ['remember {text}'] },
  ]);
  assert.deepEqual(m.match('good evening.'), { intent: 'greeting', arguments: {}, reply: 'Good evening! Hi.' });
  assert.equal(m.match('My Dog is  called Rex!')?.arguments.text, 'My Dog is called Rex');
  assert.equal(m.match('Remember: the parcel: next door')?.arguments.text, 'the parcel: next door');
  assert.throws(() => compileSentence('say {utterance}'), /bad slot/, 'utterance is reserved');
});

void test('a word glued to a slot follows it without a space', () => {
  const m = new SentenceMatcher([{ intent: 'statement', tool: 'remember', args: { owner: '{owner}', thing: '{thing}' }, sentences: ["{owner}'s {thing} is {value}"] }]);
  assert.deepEqual(m.match("Mum's birthday is on 3 May")?.arguments, { owner: 'Mum', thing: 'birthday' });
  assert.equal(m.match('Mum s birthday is 3 May'), null);
});
