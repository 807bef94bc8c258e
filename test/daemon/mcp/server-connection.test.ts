// ServerConnection against the fixture MCP server (test/helpers/mcp-fixture-server.mjs) over stdio,
// with a real tool registry: tools registered under mcp:<name> with the declared safety, list_changed
// followed, a call past the timeout fails as a ToolFailure, a crash takes the tools away and a
// reconnect (on the backoff schedule, jitter fixed) brings them back from a new process; stop ends
// the child and retries no more. reconnectDelay's schedule is checked on its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import { ToolFailure } from '../../../daemon/kernel/tool';
import { ServerConnection, probeServer } from '../../../daemon/mcp/server-connection';
import { loadClientSdk } from '../../../daemon/mcp/sdk';
import { BACKOFF, reconnectDelay } from '../../../daemon/mcp/server-config';
import { FIXTURE } from '../../helpers/mcp-rig';
import { until } from '../../helpers/poll';

const vault = { get: () => undefined, status: () => ({ state: 'ok' }) };
const ctx = { sessionId: 's', turnId: 't', specialist: 'general' as const, signal: new AbortController().signal };

function rig(t: { after(fn: () => unknown): void }, callTimeoutMs = 5000, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-mcp-conn-'));
  const pids = join(dir, 'pids');
  const tools = new ToolRegistry();
  const connection = new ServerConnection({
    declaration: { name: 'fx', command: process.execPath, args: [FIXTURE], env: { FIXTURE_PID_FILE: pids, ...env }, safety: 'active' },
    source: 'settings',
    tools,
    vault,
    sdk: loadClientSdk,
    logger: pino({ level: 'silent' }),
    clock: { now: Date.now },
    callTimeoutMs,
    connectTimeoutMs: 10_000,
    // The lowest jitter: the first reconnect comes after 0.8 s.
    random: () => 0,
  });
  t.after(async () => {
    await connection.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const connected = () => until(() => `connected: ${JSON.stringify(connection.status())}`, async () => (connection.status().state === 'connected' ? connection.status() : undefined), 20_000);
  const started = (): number[] => {
    try {
      return readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  };
  return { tools, connection, connected, pids: started };
}

void test('tools are registered under mcp:<name> with the declared safety and follow list_changed', async (t) => {
  const { tools, connection, connected } = rig(t);
  connection.start();
  await connected();
  assert.equal(tools.ownerOf('mcp_fx_echo'), 'mcp:fx');
  assert.equal(tools.get('mcp_fx_echo')?.safety, 'active');
  assert.deepEqual(tools.problems('mcp_fx_echo', { text: 1 }).length > 0, true, 'the converted schema checks arguments');
  const out = await tools.get('mcp_fx_echo')!.run({ text: 'hi' }, ctx);
  assert.equal(out.summary, 'echo: hi');

  await tools.get('mcp_fx_add_tool')!.run({ tool: 'late' }, ctx);
  await until(() => 'mcp_fx_late registered', async () => (tools.get('mcp_fx_late') ? true : undefined), 10_000);
  await tools.get('mcp_fx_remove_tool')!.run({ tool: 'late' }, ctx);
  await until(() => 'mcp_fx_late gone', async () => (tools.get('mcp_fx_late') ? undefined : true), 10_000);
});

void test('a hanging call fails within the timeout; a crash takes the tools away and a reconnect brings them back', async (t) => {
  const { tools, connection, connected, pids } = rig(t, 500);
  connection.start();
  await connected();
  await assert.rejects(tools.get('mcp_fx_hang')!.run({}, ctx), (err: Error) => err instanceof ToolFailure && /did not answer hang within 500 ms/.test(err.message));

  await assert.rejects(tools.get('mcp_fx_crash')!.run({}, ctx), ToolFailure);
  await until(() => 'tools gone after the crash', async () => (tools.get('mcp_fx_echo') ? undefined : true), 10_000);
  assert.match(connection.status().last_error ?? '', /closed the connection.*crashing on request/);
  const back = await connected();
  assert.equal(back.reconnects, 1);
  assert.equal(pids().length, 2);
  assert.ok(tools.get('mcp_fx_echo'));

  await connection.stop();
  assert.equal(tools.names().length, 0, 'stop takes the tools away');
  await until(() => 'the child to end', async () => (pids().every((pid) => !isAlive(pid)) ? true : undefined), 10_000);
});

void test('stop while a server is still in its handshake ends its child', async (t) => {
  const { connection, pids } = rig(t, 5000, { FIXTURE_SLOW_START_MS: '60000' });
  connection.start();
  await until(() => 'the child to start', async () => (pids().length === 1 ? true : undefined), 10_000);
  assert.equal(connection.status().state, 'connecting');
  await connection.stop();
  await until(() => 'the child to end', async () => (isAlive(pids()[0]!) ? undefined : true), 10_000);
});

void test('a server that cannot start fails with its reason and is retried; probeServer reports it', async () => {
  const sdk = await loadClientSdk();
  const r = await probeServer(sdk, { name: 'nope', command: '/nonexistent/mcp-server' }, vault, 2000);
  assert.equal(r.ok, false);
  assert.match(r.error ?? '', /ENOENT/);
  const ok = await probeServer(sdk, { name: 'fx', command: process.execPath, args: [FIXTURE] }, vault, 10_000);
  assert.equal(ok.ok, true);
  assert.ok(ok.tools.some((tool) => tool.name === 'mcp_fx_add_tool' && tool.remote_name === 'Add-Tool'));
});

void test('reconnectDelay: 1 s doubling to 5 min, ±20 %, never past 5 min', () => {
  assert.equal(reconnectDelay(0, () => 0.5), 1000);
  assert.equal(reconnectDelay(1, () => 0.5), 2000);
  assert.equal(reconnectDelay(0, () => 0), 800);
  assert.equal(reconnectDelay(0, () => 1), 1200);
  assert.equal(reconnectDelay(8, () => 0.5), 256_000);
  for (const attempt of [9, 10, 50, 1000]) assert.ok(reconnectDelay(attempt, () => 1) <= BACKOFF.maxMs);
  assert.equal(reconnectDelay(1000, () => 0), BACKOFF.maxMs * 0.8);
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}
