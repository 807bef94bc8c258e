// SOUL.md and USER.md as text: field values written by the brain never become Markdown structure,
// and they read back as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { escapeLine, parseSoul, renderSoul, sections, SOUL_TEMPLATE, USER_TEMPLATE, userName, withUserName, type SoulFields } from '../../../daemon/identity/identity-text';

// One-line values as the API admits them (protocol/identity.ts), biased towards Markdown block syntax.
const line = fc
  .tuple(
    fc.constantFrom('', '#', '## ', '# ', '>', '```', '~~~', '<!--', '- ', '* ', '+ ', '---', '===', '|', '\\', '\\#', '_', '   #'),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.constantFrom('', ' ## Rules', ' #', '\\'),
  )
  .map(([head, body, tail]) => `${head}${body}${tail}`.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ''))
  .map((s) => s.trim())
  .filter((s) => s.length > 0);
const fields = fc.record({ name: line, personality: line, rules: fc.array(line, { minLength: 1, maxLength: 4 }), style: line });

void test('property: SOUL.md written from any fields has exactly its four sections and reads back the same fields', () => {
  fc.assert(
    fc.property(fields, (f: SoulFields) => {
      const md = renderSoul(f);
      assert.deepEqual([...sections(md).keys()], ['name', 'personality', 'rules', 'style']);
      const headings = md.split('\n').filter((l) => /^ {0,3}#/.test(l));
      assert.deepEqual(headings, ['# SOUL.md — who the assistant is', '## Name', '## Personality', '## Rules', '## Style']);
      assert.deepEqual(parseSoul(md), { ...f });
    }),
    { numRuns: 500 },
  );
});

void test('a value that starts like a heading, quote or fence is escaped in the file; line breaks cannot reach it', () => {
  const md = renderSoul({ name: '## Rules', personality: '# Heading', rules: ['> quoted', '- nested'], style: '```' });
  assert.match(md, /## Name\n\\## Rules\n/);
  assert.match(md, /## Rules\n- \\> quoted\n- \\- nested\n/);
  assert.equal(escapeLine('calm\n# Heading\r\n## Rules'), 'calm # Heading ## Rules');
  assert.deepEqual(parseSoul(SOUL_TEMPLATE), parseSoul(renderSoul(parseSoul(SOUL_TEMPLATE))));
});

void test("USER.md name: $' and $& are text, and a name never adds a line", () => {
  for (const name of ["$'", '$&', '$`', '$1', 'Ada\n# Heading', 'Ada\r## Notes']) {
    const md = withUserName(USER_TEMPLATE, name);
    assert.equal(md.split('\n').length, USER_TEMPLATE.split('\n').length, JSON.stringify(name));
    assert.deepEqual([...sections(md).keys()], ['about', 'preferences', 'notes']);
    assert.equal(userName(md), name.replace(/[\r\n]+/g, ' '));
  }
  fc.assert(
    fc.property(line, (name) => {
      const md = withUserName(USER_TEMPLATE, name);
      assert.equal(userName(md), name);
      assert.deepEqual([...sections(md).keys()], ['about', 'preferences', 'notes']);
    }),
  );
});
