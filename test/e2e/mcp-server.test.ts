// The brain's tools as an MCP server (issue 16), on the built brain with the official SDK client: over
// Streamable HTTP at /mcp and over stdio through `svc mcp` (spawned as a desktop app would), the same
// tools; a privileged tool answers pending with the approval request id GET /api/approvals lists; a
// result is scrubbed of the brain's secrets; no token is a 401 in the error envelope; malformed
// JSON, a message that is not JSON-RPC, an unknown session, an unknown tool and invalid arguments
// each get a clear error and the brain keeps serving; `svc mcp` with no brain says so on stderr.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { SVC, startBrain, tempHome } from '../helpers/brain-process';
import { httpClient, stdioClient } from '../helpers/mcp-rig';
import type { ApprovalList } from '../../protocol/approvals';

type TextResult = { content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

const toolNames = async (client: Awaited<ReturnType<typeof httpClient>>): Promise<string[]> => (await client.listTools()).tools.map((t) => t.name);

void test('over HTTP and stdio the SDK client lists the same tools and calls one; run_command is held for approval with its request id', { timeout: 90_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  const http = await httpClient(brain.url, brain.token);
  t.after(() => http.close());
  const names = await toolNames(http);
  for (const expected of ['status', 'remember', 'run_command']) assert.ok(names.includes(expected), `${expected} in ${names.join(',')}`);

  const status = (await http.callTool({ name: 'status', arguments: {} })) as TextResult;
  assert.notEqual(status.isError, true, JSON.stringify(status));
  assert.equal(status.structuredContent?.status, 'ok');

  const held = (await http.callTool({ name: 'run_command', arguments: { argv: ['/bin/true'] } })) as TextResult;
  assert.notEqual(held.isError, true, 'pending is a result, not an error');
  assert.equal(held.structuredContent?.status, 'pending_approval');
  const requestId = held.structuredContent?.approval_request_id;
  assert.equal(typeof requestId, 'string');
  assert.ok(held.content[0]!.text.includes(String(requestId)), 'the text names the request');
  const approvals = (await (await brain.api('/api/approvals')).json()) as ApprovalList;
  const listed = approvals.approvals.find((a) => a.request_id === requestId);
  assert.ok(listed, `request ${String(requestId)} in ${JSON.stringify(approvals)}`);
  assert.equal(listed.tool_name, 'run_command');
  assert.equal(listed.session_id, 'mcp');

  const { client: stdio, stderr } = await stdioClient(brain);
  t.after(() => stdio.close());
  assert.deepEqual((await toolNames(stdio)).sort(), [...names].sort(), 'one tool plane');
  const viaStdio = (await stdio.callTool({ name: 'status', arguments: {} })) as TextResult;
  assert.equal(viaStdio.structuredContent?.status, 'ok', stderr());
  const heldStdio = (await stdio.callTool({ name: 'run_command', arguments: { argv: ['/bin/true'] } })) as TextResult;
  assert.equal(heldStdio.structuredContent?.status, 'pending_approval');
  const after = (await (await brain.api('/api/approvals')).json()) as ApprovalList;
  assert.ok(after.approvals.some((a) => a.request_id === heldStdio.structuredContent?.approval_request_id), 'the stdio call is held in the same approvals');
});

void test('a result that would carry the API token is scrubbed', { timeout: 60_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  const http = await httpClient(brain.url, brain.token);
  t.after(() => http.close());
  const r = (await http.callTool({ name: 'remember', arguments: { text: `the door code is ${brain.token}` } })) as TextResult;
  assert.notEqual(r.isError, true, JSON.stringify(r));
  const all = JSON.stringify(r);
  assert.ok(!all.includes(brain.token), 'no token in the result');
  assert.ok(all.includes('[REDACTED]'), all);
});

void test('bad input: no token 401, malformed JSON 400, not JSON-RPC, unknown session, unknown tool, invalid arguments; the brain keeps serving', { timeout: 60_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${brain.url}/mcp`, { method: 'POST', body, headers: { authorization: `Bearer ${brain.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } });

  const anonymous = await fetch(`${brain.url}/mcp`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
  assert.equal(anonymous.status, 401);
  assert.equal(((await anonymous.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED');
  await assert.rejects(httpClient(brain.url, undefined), 'the SDK client without a token fails to connect');

  const malformed = await post('{"jsonrpc": "2.0", "method": ');
  assert.equal(malformed.status, 400);
  assert.equal(((await malformed.json()) as { error: { code: string } }).error.code, 'BAD_REQUEST');

  // Before a session takes the request, refusals are in the envelope too; an MCP client reads the status.
  const envelope = async (r: Response) => ((await r.json()) as { error: { code: string; message: string } }).error;
  const notRpc = await post(JSON.stringify({ hello: 'world' }));
  assert.equal(notRpc.status, 400);
  const noSession = await envelope(notRpc);
  assert.equal(noSession.code, 'BAD_REQUEST');
  assert.match(noSession.message, /the first request of an MCP session is initialize/);

  const stale = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { 'mcp-session-id': 'no-such-session' });
  assert.equal(stale.status, 404);
  assert.equal((await envelope(stale)).code, 'NOT_FOUND');

  const badVersion = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }), { accept: 'text/html' });
  assert.equal(badVersion.status, 406, 'from here the SDK answers, in JSON-RPC');
  assert.equal(((await badVersion.json()) as { jsonrpc: string }).jsonrpc, '2.0');

  const http = await httpClient(brain.url, brain.token);
  t.after(() => http.close());
  await assert.rejects(http.callTool({ name: 'no_such_tool', arguments: {} }), (err: Error & { code?: number }) => err.code === -32602 && /unknown tool "no_such_tool"/.test(err.message));
  const invalid = (await http.callTool({ name: 'remember', arguments: { text: 42 } })) as TextResult;
  assert.equal(invalid.isError, true);
  assert.match(invalid.content[0]!.text, /invalid arguments for remember: \/text/);

  assert.equal((await http.callTool({ name: 'status', arguments: {} })).isError, undefined, 'still serving');
  assert.equal((await fetch(`${brain.url}/health`)).status, 200);
});

void test('svc mcp with no brain running says so on stderr, writes nothing on stdout and exits 1', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const home = tempHome('svc-mcp-nobrain-');
  const r = spawnSync(process.execPath, [SVC, 'mcp', '--url', `http://127.0.0.1:${port}`], { env: { ...process.env, SVC_HOME: home, SVC_API_TOKEN: 'some-token' }, input: '', encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '', 'stdout is the protocol: nothing else on it');
  assert.match(r.stderr, /svc mcp: the svc brain at http:\/\/127\.0\.0\.1:\d+ is not running .*svc start/);
});
