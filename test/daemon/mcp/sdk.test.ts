// The SDK loaders: each loads its half once and hands every caller the same classes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadClientSdk, loadServerSdk } from '../../../daemon/mcp/sdk';

void test('the client and server halves load on first use and are shared', async () => {
  const [a, b] = await Promise.all([loadClientSdk(), loadClientSdk()]);
  assert.equal(a, b);
  assert.equal(typeof a.Client, 'function');
  assert.equal(typeof a.StdioClientTransport, 'function');
  const s = await loadServerSdk();
  assert.equal(s, await loadServerSdk());
  assert.equal(s.isInitializeRequest({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }), true);
  assert.equal(s.isInitializeRequest({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), false);
});
