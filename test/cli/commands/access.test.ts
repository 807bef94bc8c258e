// svc access against a loopback server answering like /api/access: status (text and --json), the four
// changes as bodiless POSTs, a refusal printed with its fix, and an unknown action (exit 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { access } from '../../../cli/commands/access';
import type { AccessStatus } from '../../../protocol/access';
import { fakeBrain, io } from '../../helpers/cli-rig';

const lan: AccessStatus = {
  mode: 'lan',
  listener: 'lan',
  pinned_host: null,
  listening: [
    { host: '0.0.0.0', family: 'IPv4', port: 9090 },
    { host: '::', family: 'IPv6', port: 9090 },
  ],
  urls: ['http://192.168.1.20:9090', 'http://[fd00::20]:9090'],
  tunnel: { provider: 'tailscale', state: 'off', url: null, error: null, fix: null },
};

void test('svc access (status) prints the mode, the addresses, the URLs and the tunnel; --json the body', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [200, lan]);
  const { io: cli, text } = io();
  assert.equal(await access(conn, cli, { action: undefined, json: false }), 0);
  assert.deepEqual(seen, [{ method: 'GET', url: '/api/access/status', body: undefined }]);
  assert.equal(text.out, 'mode: lan (listening on 0.0.0.0:9090, [::]:9090)\nreachable at:\n  http://192.168.1.20:9090\n  http://[fd00::20]:9090\ntunnel: tailscale off\n');
  text.out = '';
  assert.equal(await access(conn, cli, { action: 'status', json: true }), 0);
  assert.deepEqual(JSON.parse(text.out), lan);
});

void test('svc access lan|localhost|remote-up|remote-down POST without a body and print the new status', async (t) => {
  const remote: AccessStatus = { ...lan, mode: 'remote', urls: ['https://brain.tail1234.ts.net', ...lan.urls], tunnel: { ...lan.tunnel, state: 'up', url: 'https://brain.tail1234.ts.net' } };
  const { conn, seen } = await fakeBrain(t, (s) => [200, s.url.endsWith('remote-up') ? remote : lan]);
  const { io: cli, text } = io();
  for (const action of ['lan', 'localhost', 'remote-up', 'remote-down']) assert.equal(await access(conn, cli, { action, json: false }), 0);
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url} ${String(s.body)}`), ['POST /api/access/lan undefined', 'POST /api/access/localhost undefined', 'POST /api/access/remote-up undefined', 'POST /api/access/remote-down undefined']);
  assert.match(text.out, /mode: remote over lan .*\nreachable at:\n {2}https:\/\/brain\.tail1234\.ts\.net\n/);
  assert.match(text.out, /tunnel: tailscale up https:\/\/brain\.tail1234\.ts\.net\n/);
});

void test('a refusal prints the message and the fix, exit 1; localhost says who can reach it', async (t) => {
  const refusal = { error: { code: 'CONFLICT', message: "the Tailscale CLI (tailscale) is not installed or not on the brain's PATH", details: { tunnel: 'tailscale', reason: 'cli_missing', fix: 'install Tailscale' } } };
  const local: AccessStatus = { ...lan, mode: 'localhost', listener: 'localhost', urls: [], listening: [{ host: '127.0.0.1', family: 'IPv4', port: 9090 }] };
  const { conn } = await fakeBrain(t, (s) => (s.method === 'POST' ? [409, refusal] : [200, local]));
  const { io: cli, text } = io();
  assert.equal(await access(conn, cli, { action: 'remote-up', json: false }), 1);
  assert.equal(text.err, "svc: the Tailscale CLI (tailscale) is not installed or not on the brain's PATH\nfix: install Tailscale\n");
  assert.equal(await access(conn, cli, { action: 'status', json: false }), 0);
  assert.match(text.out, /reachable from this machine only; `svc access lan`/);
});

void test('an unknown action is a usage error (2) and asks the brain nothing', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [200, lan]);
  const { io: cli, text } = io();
  assert.equal(await access(conn, cli, { action: 'public', json: false }), 2);
  assert.match(text.err, /unknown access action "public"\nusage: svc access/);
  assert.deepEqual(seen, []);
});
