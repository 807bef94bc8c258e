// The node-agent's systemd notifications through the real systemd-notify binary to a real datagram
// socket (test/helpers/notify-socket.ts): READY=1 with STATUS= and MAINPID=, STATUS= only when it
// changes, WATCHDOG=1, STOPPING=1; nothing without NOTIFY_SOCKET; a missing binary is one warning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createAgentNotifier, watchdogEveryMs } from '../../node-agent/sd-notify';
import { listenNotify } from '../helpers/notify-socket';

void test('watchdogEveryMs: half of WATCHDOG_USEC, at least 500 ms, none without a socket or a watchdog', () => {
  assert.equal(watchdogEveryMs({ NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: '30000000' }), 15_000);
  assert.equal(watchdogEveryMs({ NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: '200000' }), 500);
  assert.equal(watchdogEveryMs({ WATCHDOG_USEC: '30000000' }), null);
  assert.equal(watchdogEveryMs({ NOTIFY_SOCKET: '/run/x' }), null);
  assert.equal(watchdogEveryMs({ NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: 'x' }), null);
});

void test('READY with STATUS and MAINPID, STATUS on change only, WATCHDOG, STOPPING', { timeout: 30_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-agent-notify-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const sock = await listenNotify(dir);
  t.after(() => sock.close());
  const warnings: string[] = [];
  const n = createAgentNotifier({ NOTIFY_SOCKET: sock.path, PATH: process.env.PATH }, { warn: (_o, m) => void warnings.push(m) });
  t.after(() => n.stop());
  n.ready('connected to ws://b/v1/node; 1 device (1 connected)');
  const ready = await sock.waitFor('READY=1');
  assert.ok(ready.includes('STATUS=connected to ws://b/v1/node; 1 device (1 connected)'), ready.join('|'));
  assert.ok(ready.includes(`MAINPID=${process.pid}`));
  n.status('connected to ws://b/v1/node; 1 device (1 connected)');
  n.status('line one\nline two');
  await sock.waitFor('STATUS=line one line two');
  n.watchdog();
  await sock.waitFor('WATCHDOG=1');
  n.stopping();
  await sock.waitFor('STOPPING=1');
  const statuses = sock.datagrams().flat().filter((l) => l.startsWith('STATUS=connected'));
  assert.equal(statuses.length, 1, 'an unchanged status is not sent again');
  assert.deepEqual(warnings, []);
});

void test('no NOTIFY_SOCKET: nothing is spawned; a missing systemd-notify is one warning, then silence', async () => {
  const warnings: string[] = [];
  const quiet = createAgentNotifier({}, { warn: (_o, m) => void warnings.push(m) }, '/nonexistent/systemd-notify');
  quiet.ready('x');
  quiet.watchdog();
  quiet.stop();
  const broken = createAgentNotifier({ NOTIFY_SOCKET: '/tmp/none.sock' }, { warn: (_o, m) => void warnings.push(m) }, '/nonexistent/systemd-notify');
  broken.ready('x');
  await sleep(300);
  broken.watchdog();
  broken.status('y');
  await sleep(300);
  broken.stop();
  assert.deepEqual(warnings, ['cannot notify systemd (/nonexistent/systemd-notify unavailable)']);
});
