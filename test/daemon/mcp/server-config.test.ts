// A declaration's transport parameters: vault references read at connect time (a missing secret or a
// locked vault is a ServerConfigError naming what is missing), the target described without secrets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServerConfigError, describeTarget, resolveValue, transportParams } from '../../../daemon/mcp/server-config';

const vault = (entries: Record<string, string>, state = 'ok') => ({ get: (ns: string, key: string) => entries[`${ns}/${key}`], status: () => ({ state }) });

void test('plain values as they are; vault references from the vault', () => {
  const v = vault({ 'mcp/token': 's3cret', 'providers/openai:default': 'sk-1' });
  assert.equal(resolveValue('plain', v, 'env X'), 'plain');
  assert.equal(resolveValue({ vault: 'mcp/token' }, v, 'env X'), 's3cret');
  assert.equal(resolveValue({ vault: 'providers/openai:default' }, v, 'env X'), 'sk-1');
  assert.deepEqual(transportParams({ name: 'a', command: 'srv', args: ['-x'], env: { T: { vault: 'mcp/token' }, M: 'ro' } }, v), { kind: 'stdio', command: 'srv', args: ['-x'], env: { T: 's3cret', M: 'ro' } });
  assert.deepEqual(transportParams({ name: 'a', url: 'http://127.0.0.1:1/mcp', headers: { authorization: { vault: 'mcp/token' } } }, v), { kind: 'http', url: 'http://127.0.0.1:1/mcp', headers: { authorization: 's3cret' } });
});

void test('a missing secret or a locked vault names what is missing', () => {
  assert.throws(() => transportParams({ name: 'a', command: 'srv', env: { T: { vault: 'mcp/nope' } } }, vault({})), (err: Error) => err instanceof ServerConfigError && /env T: no secret mcp\/nope in the vault/.test(err.message));
  assert.throws(() => resolveValue({ vault: 'mcp/token' }, vault({ 'mcp/token': 'x' }, 'locked'), 'header authorization'), /header authorization: the vault is locked/);
});

void test('the target: the command line with quoted arguments, a URL without user info or query', () => {
  assert.equal(describeTarget({ name: 'a', command: 'npx', args: ['-y', '@scope/pkg', 'a dir'] }), 'npx -y @scope/pkg "a dir"');
  assert.equal(describeTarget({ name: 'a', url: 'https://user:pw@example.test:8443/mcp?key=secret' }), 'https://example.test:8443/mcp');
});
