// The /mcp sessions on a plain node:http server (no fastify), with the SDK client: an initialize opens
// a session and tools/list answers; a change of the registry reaches the client as
// notifications/tools/list_changed; past maxSessions the least recently used is closed (its client
// gets 404); a session idle past idleMs is closed by the next request; DELETE ends one; stop closes all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import { defineTool } from '../../../daemon/kernel/tool';
import { HttpSessions } from '../../../daemon/mcp/http-sessions';
import { loadServerSdk } from '../../../daemon/mcp/sdk';
import { httpClient } from '../../helpers/mcp-rig';
import { until } from '../../helpers/poll';

const tool = (name: string) => defineTool({ spec: { name, description: name, parameters: Type.Object({}) }, safety: 'passive', run: async () => ({ summary: name }) });

async function rig(t: { after(fn: () => unknown): void }, maxSessions = 4, idleMs = 60_000) {
  const tools = new ToolRegistry().register('memory', tool('first'));
  let now = 0;
  const sessions = new HttpSessions({
    sdk: loadServerSdk,
    plane: { tools, permissions: { check: () => ({ verdict: 'allow' }) }, secrets: { scrub: (s) => s, scrubValue: (v) => v }, logger: pino({ level: 'silent' }) },
    logger: pino({ level: 'silent' }),
    now: () => now,
    maxSessions,
    idleMs,
  });
  tools.onChange(() => sessions.toolsChanged());
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void sessions.handle(req, res, chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    await sessions.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { tools, sessions, url, tick: (ms: number) => void (now += ms) };
}

void test('a session lists tools and hears list_changed when the registry changes', async (t) => {
  const { tools, sessions, url } = await rig(t);
  let told = 0;
  const client = await httpClient(url, undefined, () => told++);
  t.after(() => client.close());
  assert.equal(sessions.size, 1);
  assert.deepEqual((await client.listTools()).tools.map((x) => x.name), ['first']);
  tools.register('memory', tool('second')).register('memory', tool('third'));
  await until(() => 'list_changed', async () => (told > 0 ? true : undefined), 10_000);
  assert.deepEqual((await client.listTools()).tools.map((x) => x.name), ['first', 'second', 'third']);
  assert.equal(told, 1, 'one notification for the changes of one tick');
});

void test('past maxSessions the least recently used closes; idle sessions close; DELETE ends one', async (t) => {
  const { sessions, url, tick } = await rig(t, 2, 10_000);
  const a = await httpClient(url, undefined);
  tick(1);
  const b = await httpClient(url, undefined);
  tick(1);
  await a.listTools(); // a is now the most recent
  tick(1);
  const c = await httpClient(url, undefined);
  t.after(() => Promise.all([a.close(), b.close(), c.close()]));
  assert.equal(sessions.size, 2);
  await assert.rejects(b.listTools(), /404|not found/i, 'b was least recently used');
  await a.listTools();

  tick(20_000);
  const d = await httpClient(url, undefined); // its initialize sweeps a and c out
  t.after(() => d.close());
  assert.equal(sessions.size, 1);
  await assert.rejects(c.listTools(), /404|not found/i);

  await (d.transport as unknown as { terminateSession(): Promise<void> }).terminateSession();
  await until(() => 'the deleted session gone', async () => (sessions.size === 0 ? true : undefined), 5000);
});
