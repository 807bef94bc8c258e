// Forgetting a note forgets what was derived from it (issue 9 item 3): episodes that repeat it are
// redacted (or removed when nothing else is left), facts from it or repeating it go, and episodes
// written later — the one holding the "forget" exchange itself — never store it again.
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { memoryFixture } from './memory-fixture';
import { REDACTED, redactText, type Fingerprint } from '../../../daemon/memory/forgetting';
import { stem } from '../../../daemon/memory/query-terms';
import type { ChatMessage } from '../../../daemon/kernel/conversation';

const chat = (...turns: string[]): ChatMessage[] => turns.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content }));

void test('forgetting a note redacts the episodes that repeat it, drops the facts from it, and redacts later episodes', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close({ keep: false }));
  await mem.memory.remember('The dentist is Dr Kowalski on Tuesday.');
  const secret = await mem.memory.remember('My wifi password is hunter2');
  const mixed = await mem.memory.recordEpisode({
    sessionId: 's1',
    reason: 'session_end',
    messages: chat('Remember my wifi password is hunter2.', "I'll remember that my wifi password is hunter2.", 'Also book the boiler service for March.', 'Booked the boiler service.'),
  });
  const only = await mem.memory.recordEpisode({ sessionId: 's2', reason: 'session_end', messages: chat('What is my wifi password?', 'Your wifi password is hunter2.') });
  const [fromNote] = await mem.memory.addTriples([{ subject: 'home wifi', predicate: 'has password', object: 'hunter2' }], secret.id);
  const [shared] = await mem.memory.addTriples([{ subject: 'home wifi', predicate: 'is on', object: 'the second floor' }], secret.id);
  await mem.memory.addTriples([{ subject: 'home wifi', predicate: 'is on', object: 'the second floor', confidence: 0.6 }], 'user');
  const [repeats] = await mem.memory.addTriples([{ subject: 'wifi password', predicate: 'is', object: 'hunter2' }], 'session:s2');
  assert.ok((await mem.memory.search('hunter2', { limit: 10 })).results.length >= 3);

  assert.equal(await mem.memory.forget(secret.id), true);
  for (const q of ['hunter2', 'wifi password', 'what is my wifi password']) {
    const hits = (await mem.memory.search(q, { limit: 10 })).results;
    assert.ok(hits.every((h) => !/hunter2/.test(h.summary)), `${q}: ${JSON.stringify(hits)}`);
  }
  const kept = mem.memory.parts.episodes.get(mixed!.id)!;
  assert.doesNotMatch(kept.summary, /hunter2/);
  assert.match(kept.summary, /boiler service/);
  assert.ok(kept.summary.includes(REDACTED));
  assert.equal(mem.memory.parts.episodes.get(only!.id), undefined, 'an episode with nothing else in it goes');
  assert.equal(mem.memory.parts.knowledge.get(fromNote!.id), undefined);
  assert.equal(mem.memory.parts.knowledge.get(repeats!.id), undefined);
  const left = mem.memory.parts.knowledge.get(shared!.id)!;
  assert.deepEqual(left.sources.map((s) => s.source), ['user']);
  assert.equal(left.confidence, 0.6);

  // The conversation in which the user asked to forget is summarised after the delete.
  const later = await mem.memory.recordEpisode({
    sessionId: 's3',
    reason: 'session_end',
    messages: chat('Forget the password.', 'Forgotten: My wifi password is hunter2.', 'And remind me to call Anna.', 'I will remind you to call Anna.'),
  });
  assert.ok(later);
  assert.doesNotMatch(later.summary, /hunter2/);
  assert.match(later.summary, /Anna/);
  assert.equal(await mem.memory.recordEpisode({ sessionId: 's4', reason: 'session_end', messages: chat('my wifi password is hunter2', 'Noted: my wifi password is hunter2.') }), null);
});

void test('the fingerprint of a forgotten note survives a restart, and holds no word of it', async (t) => {
  const first = memoryFixture();
  const secret = await first.memory.remember('Bank PIN is 4711 for the Sparkasse card');
  await first.memory.forget(secret.id);
  const stored = first.store.all<{ terms: string }>('SELECT terms FROM memory_forgotten');
  assert.equal(stored.length, 1);
  assert.doesNotMatch(stored[0]!.terms, /4711|sparkasse|pin/i);
  await first.close({ keep: true });
  const mem = memoryFixture({ dir: first.dir });
  t.after(() => mem.close());
  const ep = await mem.memory.recordEpisode({ sessionId: 's', reason: 'session_end', messages: chat('The bank PIN is 4711 for the Sparkasse card, right?', 'Yes. Shall I also water the monstera?') });
  assert.ok(ep);
  assert.doesNotMatch(ep.summary, /4711/);
  assert.match(ep.summary, /monstera/);
});

void test('redaction takes out every sentence holding all of a forgotten note and nothing without its words (fast-check)', () => {
  const vocab = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf'];
  const note = ['alpha', 'bravo', 'charlie'];
  const print: Fingerprint = new Map(note.map((w, i) => [hash(w), 1 + i]));
  fc.assert(
    fc.property(fc.array(fc.array(fc.constantFrom(...vocab), { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 6 }), (sentences) => {
      const text = sentences.map((s) => `${s.join(' ')}.`).join(' ');
      const out = redactText(text, [print], 0.55).text.split(/(?<=[.\]])\s+/);
      assert.equal(out.length, sentences.length);
      sentences.forEach((s, i) => {
        if (note.every((w) => s.includes(w))) assert.equal(out[i], REDACTED);
        if (!note.some((w) => s.includes(w))) assert.equal(out[i], `${s.join(' ')}.`);
      });
    }),
  );
});

const hash = (word: string): string => createHash('sha256').update(stem(word)).digest('hex').slice(0, 16);

void test('a fact asserted on its own survives forgetting a note its words resemble; one only a conversation repeated goes', async (t) => {
  const mem = memoryFixture();
  t.after(() => mem.close({ keep: false }));
  const [asserted] = await mem.memory.addTriples([{ subject: 'Alice', predicate: 'likes', object: 'tea' }], 'user');
  const [repeated] = await mem.memory.addTriples([{ subject: 'Alice', predicate: 'really likes', object: 'tea' }], 'turn:t1');
  const note = await mem.memory.remember('Alice likes tea.');
  assert.equal(await mem.memory.forget(note.id), true);
  assert.ok(mem.memory.parts.knowledge.get(asserted!.id), 'the user asserted this fact itself');
  assert.equal(mem.memory.parts.knowledge.get(repeated!.id), undefined, 'only the turn that repeated the note backed this one');
});
