// The set of client connections: apply connects what is new, leaves an unchanged one alone, replaces a
// changed one and closes what went (its tools go with it); a disabled server is listed and never
// connected; stop closes everything and a later apply connects nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import { McpClients } from '../../../daemon/mcp/mcp-clients';
import { loadClientSdk } from '../../../daemon/mcp/sdk';
import { FIXTURE } from '../../helpers/mcp-rig';
import { until } from '../../helpers/poll';
import type { McpServerDeclaration } from '../../../protocol/mcp';

void test('apply: new, unchanged, changed, removed, disabled; stop', async (t) => {
  const tools = new ToolRegistry();
  let loads = 0;
  const clients = new McpClients({ tools, vault: { get: () => undefined, status: () => ({ state: 'ok' }) }, sdk: () => (loads++, loadClientSdk()), logger: pino({ level: 'silent' }), clock: { now: Date.now }, callTimeoutMs: 5000, connectTimeoutMs: 10_000 });
  t.after(() => clients.stop());
  const fx = (name: string, extra: Partial<McpServerDeclaration> = {}): McpServerDeclaration => ({ name, command: process.execPath, args: [FIXTURE], safety: 'passive', ...extra });
  const connected = (name: string) => until(() => `${name} connected: ${JSON.stringify(clients.get(name))}`, async () => (clients.get(name)?.state === 'connected' ? clients.get(name) : undefined), 20_000);

  await clients.apply([{ declaration: fx('off', { enabled: false }), source: 'settings' }]);
  assert.equal(clients.get('off')?.state, 'disabled');
  assert.equal(loads, 0, 'a disabled server loads no SDK');

  await clients.apply([{ declaration: fx('one'), source: 'settings' }, { declaration: fx('two'), source: 'cli' }]);
  const first = await connected('one');
  await connected('two');
  assert.ok(tools.get('mcp_one_echo') && tools.get('mcp_two_echo'));
  assert.equal(clients.get('off'), undefined, 'gone from the list');

  await clients.apply([{ declaration: fx('one'), source: 'settings' }, { declaration: fx('two', { safety: 'dangerous' }), source: 'cli' }]);
  assert.equal(clients.get('one')?.connected_at, first.connected_at, 'unchanged: the same connection');
  await connected('two');
  assert.equal(tools.get('mcp_two_echo')?.safety, 'dangerous', 'changed: reconnected with the new declaration');

  await clients.apply([{ declaration: fx('one'), source: 'settings' }]);
  assert.equal(tools.get('mcp_two_echo'), undefined);
  assert.deepEqual(clients.list().map((s) => s.name), ['one']);

  await clients.stop();
  assert.deepEqual(tools.names(), []);
  await clients.apply([{ declaration: fx('late'), source: 'cli' }]);
  assert.deepEqual(clients.list(), [], 'nothing connects after stop');
});
