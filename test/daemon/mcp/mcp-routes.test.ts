// /api/mcp through the HTTP layer (app.inject on an assembled brain): add a server (201, its status),
// refuse a bad body (400) and a taken name (409), list it with its source, store a secret (its
// reference back, the value never), test it, remove it (200), and an unknown one is 404.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessBrain } from '../../helpers/assembled-brain';
import { mcpCapability } from '../../../daemon/mcp/mcp-capability';
import { FIXTURE } from '../../helpers/mcp-rig';
import type { McpServerList, McpServerStatus, McpTestResult } from '../../../protocol/mcp';

void test('add, list, secret, test, remove', async (t) => {
  const { brain, token } = await inProcessBrain(t, { capabilities: [mcpCapability], start: true });
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) => brain.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });

  const secret = await call('PUT', '/api/mcp/secrets/fixture', { value: 'the-value' });
  assert.equal(secret.statusCode, 200);
  assert.deepEqual(secret.json(), { ref: { vault: 'mcp/fixture' } });

  const declaration = { name: 'fx', command: process.execPath, args: [FIXTURE], env: { SECRET: { vault: 'mcp/fixture' } }, safety: 'active' };
  const added = await call('POST', '/api/mcp/servers', declaration);
  assert.equal(added.statusCode, 201, added.body);
  assert.equal(added.json<McpServerStatus>().source, 'cli');
  assert.equal((await call('POST', '/api/mcp/servers', declaration)).statusCode, 409);
  assert.equal((await call('POST', '/api/mcp/servers', { name: 'Bad_Name', command: 'x' })).statusCode, 400);
  assert.equal((await call('POST', '/api/mcp/servers', { name: 'two', command: 'x', url: 'http://127.0.0.1:1/mcp' })).statusCode, 400);

  const listed = (await call('GET', '/api/mcp/servers')).json<McpServerList>();
  assert.deepEqual(listed.servers.map((s) => [s.name, s.source, s.transport]), [['fx', 'cli', 'stdio']]);
  assert.ok(!JSON.stringify(listed).includes('the-value'));

  const tested = (await call('POST', '/api/mcp/servers/fx/test')).json<McpTestResult>();
  assert.equal(tested.ok, true, JSON.stringify(tested));
  assert.ok(tested.tools.some((x) => x.name === 'mcp_fx_echo'));

  assert.deepEqual((await call('DELETE', '/api/mcp/servers/fx')).json(), { removed: 'fx' });
  assert.equal((await call('DELETE', '/api/mcp/servers/fx')).statusCode, 404);
  assert.equal((await call('POST', '/api/mcp/servers/fx/test')).statusCode, 404);
  assert.deepEqual((await call('GET', '/api/mcp/servers')).json<McpServerList>().servers, []);
});
