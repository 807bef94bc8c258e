// The capability in an assembled brain (approvals + mcp), listening on a free port: /mcp needs the admin
// token (401 in the envelope), serves the registry's tools to the SDK client and holds privileged
// calls in the approvals queue; settings with a duplicate server name or two transports refuse to
// start; server.enabled false leaves /mcp unmounted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { inProcessBrain } from '../../helpers/assembled-brain';
import { approvalsCapability } from '../../../daemon/approvals/approvals-capability';
import { mcpCapability } from '../../../daemon/mcp/mcp-capability';
import { defineTool } from '../../../daemon/kernel/tool';
import { httpClient } from '../../helpers/mcp-rig';

const capabilities = [approvalsCapability, mcpCapability];

void test('/mcp: the token, the tools, a privileged call held for approval', async (t) => {
  const { brain, token } = await inProcessBrain(t, { capabilities });
  brain.tools.register('test', defineTool({ spec: { name: 'open_door', description: 'opens the door', parameters: Type.Object({}) }, safety: 'privileged', run: async () => ({ summary: 'opened' }) }));
  const url = `http://127.0.0.1:${brain.listener.addresses()[0]!.port}`;
  const anonymous = await fetch(`${url}/mcp`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
  assert.equal(anonymous.status, 401);
  assert.equal(((await anonymous.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED');

  const client = await httpClient(url, token);
  t.after(() => client.close());
  assert.ok((await client.listTools()).tools.some((x) => x.name === 'open_door'));
  const r = (await client.callTool({ name: 'open_door', arguments: {} })) as { structuredContent?: { status: string; approval_request_id: string } };
  assert.equal(r.structuredContent?.status, 'pending_approval');
  const list = await brain.app.inject({ method: 'GET', url: '/api/approvals', headers: { authorization: `Bearer ${token}` } });
  assert.ok(list.body.includes(r.structuredContent.approval_request_id));
  const servers = await brain.app.inject({ method: 'GET', url: '/api/mcp/servers', headers: { authorization: `Bearer ${token}` } });
  assert.deepEqual(servers.json(), { servers: [] });
});

void test('bad server declarations refuse the start; server.enabled false unmounts /mcp', async (t) => {
  await assert.rejects(inProcessBrain(t, { capabilities, file: { mcp: { servers: [{ name: 'a', command: 'x' }, { name: 'a', command: 'y' }] } }, start: false }), /mcp\.servers\[1\]: the name a is used twice/);
  await assert.rejects(inProcessBrain(t, { capabilities, file: { mcp: { servers: [{ name: 'b', command: 'x', url: 'http://x/mcp' }] } }, start: false }), /not both/);
  const { brain, token } = await inProcessBrain(t, { capabilities, file: { mcp: { server: { enabled: false } } }, start: false });
  const r = await brain.app.inject({ method: 'POST', url: '/mcp', payload: {}, headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.statusCode, 404);
});
