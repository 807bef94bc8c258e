// svc mcp's relay, in-process: JSON-RPC lines on its stdin reach an assembled brain's /mcp and the
// answers come back on its stdout (initialize, tools/list, tools/call); stdin's end ends the session
// (DELETE) and the relay with 0. Without a token or a brain it says why on stderr and exits 1 before
// reading anything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import { inProcessBrain } from '../../helpers/assembled-brain';
import { mcpCapability } from '../../../daemon/mcp/mcp-capability';
import { bridge, brainProblem } from '../../../cli/commands/mcp-bridge';
import { until } from '../../helpers/poll';

const io = () => {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let err = '';
  const stderr = new PassThrough();
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  return { stdin, stdout, stderr, err: () => err };
};

void test('relays initialize, tools/list and tools/call; stdin closing ends the session', async (t) => {
  const { brain, token, home } = await inProcessBrain(t, { capabilities: [mcpCapability] });
  const url = `http://127.0.0.1:${brain.listener.addresses()[0]!.port}`;
  const s = io();
  const answers: { id?: number; result?: Record<string, unknown>; error?: unknown }[] = [];
  createInterface({ input: s.stdout }).on('line', (line) => answers.push(JSON.parse(line) as (typeof answers)[number]));
  const done = bridge({ url, token, home }, { stdin: s.stdin, stdout: s.stdout, err: s.stderr });
  const send = (m: object) => s.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
  const answer = (id: number) => until(() => `answer ${id}; stderr: ${s.err()}`, async () => answers.find((a) => a.id === id), 10_000);

  send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'desk', version: '1' } } });
  assert.equal((await answer(1)).result?.protocolVersion, '2025-06-18');
  send({ method: 'notifications/initialized' });
  send({ id: 2, method: 'tools/list' });
  const tools = (await answer(2)).result?.tools as { name: string }[];
  assert.ok(tools.some((x) => x.name === 'status'), JSON.stringify(tools));
  send({ id: 3, method: 'tools/call', params: { name: 'status', arguments: {} } });
  assert.equal(((await answer(3)).result?.structuredContent as { status: string }).status, 'ok');
  send({ id: 4, method: 'tools/call', params: { name: 'nope', arguments: {} } });
  assert.ok((await answer(4)).error, 'an unknown tool is an error answer');

  s.stdin.end();
  assert.equal(await done, 0);
  assert.equal(s.err(), '');
});

void test('no token, or no brain: a reason on stderr, exit 1, nothing on stdout', async () => {
  assert.match((await brainProblem({ url: 'http://127.0.0.1:9', token: undefined, home: '/h' })) ?? '', /no API token: none in \/h\/api-token/);
  assert.match((await brainProblem({ url: 'http://127.0.0.1:9', token: 't', home: '/h' }, 2000)) ?? '', /the svc brain at http:\/\/127\.0\.0\.1:9 is not running/);
  const s = io();
  let out = '';
  s.stdout.on('data', (d: Buffer) => (out += d.toString()));
  assert.equal(await bridge({ url: 'http://127.0.0.1:9', token: 't', home: '/h' }, { stdin: s.stdin, stdout: s.stdout, err: s.stderr }), 1);
  assert.match(s.err(), /^svc mcp: the svc brain at http:\/\/127\.0\.0\.1:9 is not running/);
  assert.equal(out, '');
});

void test('a client that writes everything at once and closes stdin gets every answer, in order, with nothing on stderr', async (t) => {
  const { brain, token, home } = await inProcessBrain(t, { capabilities: [mcpCapability] });
  const url = `http://127.0.0.1:${brain.listener.addresses()[0]!.port}`;
  const s = io();
  const answers: { id?: number; result?: Record<string, unknown> }[] = [];
  createInterface({ input: s.stdout }).on('line', (line) => answers.push(JSON.parse(line) as (typeof answers)[number]));
  const done = bridge({ url, token, home }, { stdin: s.stdin, stdout: s.stdout, err: s.stderr });
  const lines = [
    { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'burst', version: '1' } } },
    { method: 'notifications/initialized' },
    { id: 2, method: 'tools/list' },
    { id: 3, method: 'tools/call', params: { name: 'status', arguments: {} } },
  ];
  s.stdin.end(lines.map((m) => `${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`).join(''));
  assert.equal(await done, 0);
  await until(() => `three answers: ${JSON.stringify(answers)}`, async () => (answers.length >= 3 ? true : undefined), 5000);
  assert.deepEqual(answers.map((a) => a.id), [1, 2, 3]);
  assert.ok(answers.every((a) => a.result !== undefined), JSON.stringify(answers));
  assert.equal(s.err(), '');
});
