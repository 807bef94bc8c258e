// The MCP wire shapes: a server name reads back to one server (no underscore), secrets are vault
// references, and a declaration has exactly one transport.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { McpServerDeclaration, transportProblem } from '../../protocol/mcp';

const check = TypeCompiler.Compile(McpServerDeclaration);

void test('names, vault references and fields', () => {
  assert.ok(check.Check({ name: 'github', command: 'npx', args: ['-y', 'srv'], env: { TOKEN: { vault: 'mcp/github' } }, safety: 'active' }));
  assert.ok(check.Check({ name: 'remote2', url: 'https://example.test/mcp', headers: { Authorization: { vault: 'mcp/remote' } } }));
  for (const name of ['a_b', 'A', '1a', '', 'x'.repeat(25), 'a-b']) assert.ok(!check.Check({ name, command: 'x' }), name);
  assert.ok(!check.Check({ name: 'a', command: 'x', env: { T: { vault: 'no-slash' } } }), 'a reference is namespace/key');
  assert.ok(!check.Check({ name: 'a', url: 'ftp://x' }), 'http(s) only');
  assert.ok(!check.Check({ name: 'a', command: 'x', secret: 'y' }), 'no other fields');
});

void test('transportProblem: exactly one transport, with its own fields', () => {
  assert.equal(transportProblem({ command: 'x' }), null);
  assert.equal(transportProblem({ url: 'http://x' }), null);
  assert.match(transportProblem({}) ?? '', /either command/);
  assert.match(transportProblem({ command: 'x', url: 'http://x' }) ?? '', /not both/);
  assert.match(transportProblem({ url: 'http://x', args: [] }) ?? '', /belong to a stdio server/);
  assert.match(transportProblem({ command: 'x', headers: {} }) ?? '', /belong to a Streamable HTTP server/);
});
