// What `svc mcp servers add` sends: the command after `--` split into command and args, or --http; --env
// and --headers as JSON objects of strings or vault references; refused before the brain is asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configValues, declarationOf } from '../../../cli/commands/mcp';

const base = { json: false };

void test('a stdio server with env and safety; an HTTP server with headers', () => {
  assert.deepEqual(declarationOf({ ...base, name: 'fs', command: 'npx -y @scope/server /srv', env: '{"TOKEN": {"vault": "mcp/t"}, "MODE": "ro"}', safety: 'active' }), {
    name: 'fs',
    command: 'npx',
    args: ['-y', '@scope/server', '/srv'],
    env: { TOKEN: { vault: 'mcp/t' }, MODE: 'ro' },
    safety: 'active',
  });
  assert.deepEqual(declarationOf({ ...base, name: 'remote', http: 'https://example.test/mcp', headers: '{"Authorization": {"vault": "mcp/r"}}' }), {
    name: 'remote',
    url: 'https://example.test/mcp',
    headers: { Authorization: { vault: 'mcp/r' } },
  });
});

void test('refusals name the problem', () => {
  const problem = (r: unknown) => (r as { problem?: string }).problem ?? '';
  assert.match(problem(declarationOf({ ...base, name: 'a_b', command: 'x' })), /lower-case letters and digits/);
  assert.match(problem(declarationOf({ ...base, name: 'a' })), /not both/);
  assert.match(problem(declarationOf({ ...base, name: 'a', command: 'x', http: 'http://x' })), /not both/);
  assert.match(problem(declarationOf({ ...base, name: 'a', command: 'x', safety: 'yolo' })), /--safety yolo/);
  assert.match(problem(configValues('env', '{bad')), /--env: expected a JSON object/);
  assert.match(problem(configValues('env', '[1]')), /expected a JSON object/);
  assert.match(problem(configValues('headers', '{"A": 1}')), /--headers A: a value is a string or/);
  assert.match(problem(configValues('env', '{"A": {"vault": "mcp/x", "extra": 1}}')), /--env A/);
  assert.equal(configValues('env', undefined), undefined);
});
