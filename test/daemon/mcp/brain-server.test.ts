// The brain's tools as an MCP server, through the SDK client over an in-memory transport: tools/list
// leaves out tools taken from external MCP servers; tools/call goes through the permission hook with
// turn id mcp:<client>:<n> and session mcp — allowed runs, denied is isError with the reason, pending is
// a result with the request id; invalid arguments and tool failures are isError; an unknown tool is
// InvalidParams; everything is scrubbed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import { ToolDenied, ToolFailure, defineTool } from '../../../daemon/kernel/tool';
import type { PermissionDecision, PermissionRequest } from '../../../daemon/kernel/permissions';
import { createBrainServer } from '../../../daemon/mcp/brain-server';
import { loadServerSdk } from '../../../daemon/mcp/sdk';

const SECRET = 'hunter2-the-secret';

async function rig(t: { after(fn: () => unknown): void }, decide: (r: PermissionRequest) => PermissionDecision) {
  const tools = new ToolRegistry();
  const seen: PermissionRequest[] = [];
  tools.register('memory', defineTool({ spec: { name: 'echo', description: 'echo', parameters: Type.Object({ text: Type.String() }) }, safety: 'active', run: async (args) => ({ summary: `said ${args.text}`, data: { text: args.text } }) }));
  tools.register('files', defineTool({ spec: { name: 'fails', description: 'fails', parameters: Type.Object({}) }, safety: 'passive', run: () => Promise.reject(new ToolFailure('no such file')) }));
  tools.register('files', defineTool({ spec: { name: 'refuses', description: 'refuses', parameters: Type.Object({}) }, safety: 'passive', run: () => Promise.reject(new ToolDenied('outside every grant')) }));
  tools.register('mcp:other', defineTool({ spec: { name: 'mcp_other_x', description: 'x', parameters: Type.Object({}) }, safety: 'passive', run: async () => ({ summary: 'x' }) }));
  const secrets = { scrub: (s: string) => s.replaceAll(SECRET, '[REDACTED]'), scrubValue: <T>(v: T): T => JSON.parse(JSON.stringify(v).replaceAll(SECRET, '[REDACTED]')) as T };
  const server = createBrainServer(await loadServerSdk(), { tools, permissions: { check: (r) => (seen.push(r), decide(r)) }, secrets, logger: pino({ level: 'silent' }) }, 'c1');
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(b);
  t.after(() => client.close());
  return { client, seen };
}

type Result = { content: { text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

void test('tools/list leaves out external MCP tools; an allowed call runs, scrubbed, with an mcp turn id', async (t) => {
  const { client, seen } = await rig(t, () => ({ verdict: 'allow' }));
  assert.deepEqual((await client.listTools()).tools.map((x) => x.name), ['echo', 'fails', 'refuses']);
  const r = (await client.callTool({ name: 'echo', arguments: { text: `pw ${SECRET}` } })) as Result;
  assert.equal(r.isError, undefined);
  assert.equal(r.content[0]!.text, 'said pw [REDACTED]');
  assert.deepEqual(r.structuredContent, { status: 'ok', summary: 'said pw [REDACTED]', data: { text: 'pw [REDACTED]' } });
  assert.deepEqual(seen.map((s) => [s.tool, s.safety, s.sessionId, s.turnId]), [['echo', 'active', 'mcp', 'mcp:c1:1']]);
  await client.callTool({ name: 'echo', arguments: { text: 'again' } });
  assert.equal(seen.at(-1)!.turnId, 'mcp:c1:2');
});

void test('denied and pending are answers; invalid arguments, failures and refusals are isError; unknown tools are InvalidParams', async (t) => {
  const verdicts: PermissionDecision[] = [{ verdict: 'deny', reason: 'policy refuses echo' }, { verdict: 'pending', requestId: 'apr_1', reason: 'needs your approval (request apr_1)' }];
  const { client } = await rig(t, () => verdicts.shift() ?? { verdict: 'allow' });
  const denied = (await client.callTool({ name: 'echo', arguments: { text: 'x' } })) as Result;
  assert.equal(denied.isError, true);
  assert.equal(denied.content[0]!.text, 'policy refuses echo');
  const pending = (await client.callTool({ name: 'echo', arguments: { text: 'x' } })) as Result;
  assert.equal(pending.isError, undefined);
  assert.deepEqual(pending.structuredContent, { status: 'pending_approval', summary: 'needs your approval (request apr_1)', approval_request_id: 'apr_1' });
  const invalid = (await client.callTool({ name: 'echo', arguments: {} })) as Result;
  assert.equal(invalid.isError, true);
  assert.match(invalid.content[0]!.text, /^invalid arguments for echo: \/text/);
  assert.deepEqual(((await client.callTool({ name: 'fails', arguments: {} })) as Result).structuredContent, { status: 'error', summary: 'no such file' });
  assert.equal(((await client.callTool({ name: 'refuses', arguments: {} })) as Result).structuredContent?.status, 'denied');
  await assert.rejects(client.callTool({ name: 'mcp_other_x', arguments: {} }), (err: Error & { code?: number }) => err.code === -32602);
  await assert.rejects(client.callTool({ name: 'nope', arguments: {} }), /unknown tool "nope"/);
});
