// kernel/text.ts: the content words the router, the digital twin and the local agent match on, and the
// one clip (protocol/clip.ts, tested in test/protocol/clip.test.ts) re-exported for the brain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { clip as protocolClip } from '../../../protocol/clip';
import { clip, overlap, terms } from '../../../daemon/kernel/text';

void test('terms: lower-cased content words, stop words and one-letter words dropped, a plural "s" folded, each once', () => {
  assert.deepEqual(terms('What is my WiFi password?'), ['wifi', 'password']);
  assert.deepEqual(terms('Turn the lights off in the kitchen, the LIGHTS!'), ['turn', 'light', 'kitchen']);
  assert.deepEqual(terms('glass gas bus buses x 42 cats'), ['glass', 'gas', 'bus', 'buse', '42', 'cat']);
  // One tokenizer with memory search: diacritics folded the way the FTS5 index folds them.
  assert.deepEqual(terms('Überweisung für Straße'), ['uberweisung', 'fur', 'straße']);
  assert.deepEqual(terms('remember: hello, show me what I like'), [], 'stop words and request words carry no content');
  assert.deepEqual(terms('tell me about it, please'), []);
  assert.deepEqual(terms(''), []);
});

void test('overlap: the share of the query terms found in the candidate', () => {
  assert.equal(overlap(['wifi', 'password'], ['wifi', 'password', 'sunflower']), 1);
  assert.equal(overlap(['netflix', 'password'], ['wifi', 'password']), 0.5);
  assert.equal(overlap([], ['anything']), 0);
  assert.equal(overlap(['a'], []), 0);
});

void test('property: terms are unique lower-case runs of letters and digits, two or more long; overlap is within 0..1 and 1 against itself (fast-check)', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.string({ maxLength: 60 }), (a, b) => {
      const ta = terms(a);
      assert.equal(new Set(ta).size, ta.length);
      for (const t of ta) {
        assert.equal(t, t.toLowerCase());
        assert.match(t, /^[\p{L}\p{N}]+$/u);
        assert.ok(t.length >= 2, t);
      }
      const o = overlap(ta, terms(b));
      assert.ok(o >= 0 && o <= 1);
      if (ta.length > 0) assert.equal(overlap(ta, ta), 1);
    }),
  );
});

void test('clip is the protocol one', () => {
  assert.equal(clip, protocolClip);
});
