// clip(): the one rule for shortening a text for display, in the brain (daemon/kernel/text.ts
// re-exports it) and the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { clip } from '../../protocol/clip';
import { TEXT_PATTERN } from '../../protocol/text';

const unpairedSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

void test('a text that fits is unchanged; a longer one keeps max - 1 characters and a closing "…"', () => {
  assert.equal(clip('tea', 3), 'tea');
  assert.equal(clip('', 0), '');
  assert.equal(clip('teapot', 4), 'tea…');
  assert.equal(clip('teapot', 1), '…');
  assert.equal(clip('teapot', 0), '');
  assert.equal(clip('teapot', -5), '');
  assert.equal(clip('teapot', Number.NaN), '');
  assert.equal(clip('a'.repeat(81), 80), `${'a'.repeat(79)}…`);
  assert.equal(clip('a'.repeat(80), 80), 'a'.repeat(80));
});

void test('a cut never splits a surrogate pair', () => {
  assert.equal(clip('ab😀cd', 4), 'ab…', 'the pair would be cut in half: it goes whole');
  assert.equal(clip('ab😀cd', 5), 'ab😀…');
  assert.equal(clip('😀😀😀', 2), '…');
});

void test('property: never longer than max, a prefix of the input, "…" only when cut, a valid text stays valid (fast-check)', () => {
  const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 20 }));
  fc.assert(
    fc.property(text, fc.integer({ min: -2, max: 50 }), (s, max) => {
      const out = clip(s, max);
      assert.ok(out.length <= Math.max(0, max), 'never longer than max');
      const cut = out !== s;
      assert.equal(cut, s.length > Math.max(0, max), 'cut exactly when too long');
      if (!cut) return;
      if (out === '') {
        assert.ok(max < 1);
        return;
      }
      assert.ok(out.endsWith('…'), 'a cut ends with "…"');
      const kept = out.slice(0, -1);
      assert.ok(s.startsWith(kept), 'what is kept is the start of the input');
      assert.ok(kept.length >= max - 2, 'at most one more unit is dropped, to keep a surrogate pair whole');
      if (!unpairedSurrogate.test(s)) assert.ok(!unpairedSurrogate.test(out), 'no unpaired surrogate made by the cut');
      if (new RegExp(TEXT_PATTERN, 'u').test(s)) assert.ok(new RegExp(TEXT_PATTERN, 'u').test(out), 'a text the wire admits stays admitted');
    }),
  );
});
