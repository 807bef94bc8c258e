// The brain's names for external MCP tools: lower_snake_case under mcp_<server>_, a clash of slugs or
// a name past 64 characters gets six hex digits of its own name's hash; whatever the remote names,
// every result is a valid registry name, unique, and independent of the list's order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { brainToolNames, slug } from '../../../daemon/mcp/tool-names';

const VALID = /^[a-z][a-z0-9_]{0,63}$/;

void test('slug folds case and runs of other characters to one underscore', () => {
  assert.equal(slug('get-sum'), 'get_sum');
  assert.equal(slug('Search  Issues!'), 'search_issues');
  assert.equal(slug('__x__'), 'x');
  assert.equal(slug('!!!'), 'tool');
});

void test('plain names, and a hash suffix only where slugs clash or the name is too long', () => {
  const names = brainToolNames('fs', ['read_text_file', 'get-sum', 'get_sum', 'x'.repeat(80)]);
  assert.equal(names.get('read_text_file'), 'mcp_fs_read_text_file');
  const a = names.get('get-sum')!;
  const b = names.get('get_sum')!;
  assert.notEqual(a, b);
  assert.match(a, /^mcp_fs_get_sum_[0-9a-f]{6}$/);
  assert.match(b, /^mcp_fs_get_sum_[0-9a-f]{6}$/);
  const long = names.get('x'.repeat(80))!;
  assert.equal(long.length, 64);
  assert.match(long, /_[0-9a-f]{6}$/);
});

void test('property: valid, unique and order-independent for any list of remote names', () => {
  fc.assert(
    fc.property(fc.uniqueArray(fc.string({ maxLength: 90 }), { maxLength: 30 }), fc.stringMatching(/^[a-z][a-z0-9]{0,23}$/), (remotes, server) => {
      const names = brainToolNames(server, remotes);
      const values = [...names.values()];
      for (const v of values) assert.match(v, VALID);
      assert.equal(new Set(values).size, values.length, `unique: ${JSON.stringify([...names])}`);
      const reversed = brainToolNames(server, [...remotes].reverse());
      for (const r of remotes) assert.equal(reversed.get(r), names.get(r));
    }),
    { numRuns: 300 },
  );
});
