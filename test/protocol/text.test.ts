// The shared input string types hold the same rule under ajv (patterns with the `u` flag, the HTTP
// routes) and under TypeBox's checker (patterns without it: frame parser, tool registry).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Value } from '@sinclair/typebox/value';
import { Line, LINE_NOT_BLANK_PATTERN, LINE_PATTERN, Text, TEXT_NOT_BLANK_PATTERN, TEXT_PATTERN } from '../../protocol/text';

/** The rule in plain code: which strings each type admits. */
const refusedInText = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const refusedInLine = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const unpairedSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const admitsText = (s: string): boolean => !refusedInText.test(s) && !unpairedSurrogate.test(s);
const admitsLine = (s: string): boolean => !refusedInLine.test(s) && !unpairedSurrogate.test(s);

const codeUnit = fc.oneof(
  fc.integer({ min: 0, max: 0xa0 }),
  fc.integer({ min: 0xd7f0, max: 0xe010 }),
  fc.constantFrom(0x2028, 0x2029, 0xfeff, 0xfffe),
  fc.integer({ min: 0, max: 0xffff }),
);
const anyString = fc.oneof(
  fc.array(codeUnit, { maxLength: 12 }).map((units) => String.fromCharCode(...units)),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 2 }), codeUnit.map((u) => String.fromCharCode(u))), { maxLength: 8 }).map((p) => p.join('')),
);

void test('property: ajv (u flag) and TypeBox (no flag) admit exactly the strings the rule admits', () => {
  const cases: [string, (s: string) => boolean][] = [
    [TEXT_PATTERN, admitsText],
    [LINE_PATTERN, admitsLine],
    [TEXT_NOT_BLANK_PATTERN, (s) => admitsText(s) && /\S/.test(s)],
    [LINE_NOT_BLANK_PATTERN, (s) => admitsLine(s) && /\S/.test(s)],
  ];
  fc.assert(
    fc.property(anyString, (s) => {
      for (const [pattern, admits] of cases) {
        assert.equal(new RegExp(pattern, 'u').test(s), admits(s), `u ${JSON.stringify(s)}`);
        assert.equal(new RegExp(pattern).test(s), admits(s), `no flag ${JSON.stringify(s)}`);
      }
      assert.equal(Value.Check(Text(), s), admitsText(s));
      assert.equal(Value.Check(Line({ blank: false }), s), admitsLine(s) && /\S/.test(s));
    }),
    { numRuns: 2000 },
  );
});

void test('astral characters are text, lone surrogates and NUL are not, in both engines', () => {
  for (const s of ['🙂', 'a🙂b', '𝄞\n日本', '\uD83D\uDE42']) assert.ok(Value.Check(Text(), s) && new RegExp(TEXT_PATTERN, 'u').test(s), s);
  for (const s of ['\uD83D', 'a\uDE42', '\uDE42\uD83D', 'a\u0000b', '\u009b']) assert.ok(!Value.Check(Text(), s) && !new RegExp(TEXT_PATTERN, 'u').test(s), JSON.stringify(s));
  const long = 'a🙂 '.repeat(20_000);
  assert.ok(new RegExp(TEXT_NOT_BLANK_PATTERN, 'u').test(long) && new RegExp(TEXT_NOT_BLANK_PATTERN).test(long), 'a long text is scanned without running out of stack');
});
