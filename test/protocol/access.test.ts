// The /api/access shapes (docs/access.md): the status a client reads, and the mode names that the
// access_mode bus event shares with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { AccessModeName, AccessStatus, ListenerMode, TUNNEL_FAILURES } from '../../protocol/access';
import type { AccessMode } from '../../daemon/kernel/events';

const status = {
  mode: 'remote',
  listener: 'lan',
  pinned_host: null,
  listening: [{ host: '0.0.0.0', family: 'IPv4', port: 9090 }],
  urls: ['https://brain.tail1234.ts.net', 'http://192.168.1.20:9090'],
  tunnel: { provider: 'tailscale', state: 'up', url: 'https://brain.tail1234.ts.net', error: null, fix: null },
};

void test('a status names the mode, the listener mode under the tunnel, where it listens, the URLs and the tunnel', () => {
  assert.ok(Value.Check(AccessStatus, status));
  assert.ok(!Value.Check(AccessStatus, { ...status, mode: 'public' }), 'no such mode');
  assert.ok(!Value.Check(AccessStatus, { ...status, listener: 'remote' }), 'remote is not a listener mode');
  assert.ok(!Value.Check(AccessStatus, { ...status, tunnel: { ...status.tunnel, state: 'down' } }), 'tunnel states are off, starting, up, error');
});

void test('the mode names are the bus event\'s; the tunnel failures are distinct', () => {
  const names: AccessMode[] = ['localhost', 'lan', 'remote'];
  for (const name of names) assert.ok(Value.Check(AccessModeName, name));
  assert.ok(Value.Check(ListenerMode, 'lan') && !Value.Check(ListenerMode, 'remote'));
  assert.equal(new Set(TUNNEL_FAILURES).size, TUNNEL_FAILURES.length);
});
