// createNotifier against a real AF_UNIX datagram socket (socat) through the real systemd-notify
// binary: what systemd would receive for Type=notify with WatchdogSec= (sd_notify(3), STYLE.md 13).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { createNotifier, watchdogIntervalMs } from '../../../daemon/lifecycle/sd-notify';
import { listenNotify, type NotifySocket } from '../../helpers/notify-socket';

function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: pino({ level: 'debug' }, { write: (s: string) => void lines.push(s) }), lines };
}

async function socketIn(t: { after(fn: () => unknown): void }): Promise<NotifySocket> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-notify-'));
  const sock = await listenNotify(dir);
  t.after(async () => {
    await sock.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return sock;
}

void test('ready() sends READY=1 with MAINPID and a status line to $NOTIFY_SOCKET', async (t) => {
  const sock = await socketIn(t);
  const { logger, lines } = capturingLogger();
  const notifier = createNotifier({ NOTIFY_SOCKET: sock.path }, logger);
  t.after(() => notifier.stop());
  notifier.ready();
  const datagram = await sock.waitFor('READY=1');
  assert.ok(datagram.includes(`MAINPID=${process.pid}`), JSON.stringify(datagram));
  assert.ok(datagram.includes('STATUS=serving'), JSON.stringify(datagram));
  assert.deepEqual(lines, [], 'nothing is logged when systemd-notify works');
});

void test('startWatchdog() pings WATCHDOG=1 when $WATCHDOG_USEC is set; stopping() sends STOPPING=1', async (t) => {
  const sock = await socketIn(t);
  // 3 s watchdog: pings every second (a third of the interval, never faster than 1 s).
  const notifier = createNotifier({ NOTIFY_SOCKET: sock.path, WATCHDOG_USEC: '3000000' }, capturingLogger().logger);
  t.after(() => notifier.stop());
  notifier.startWatchdog();
  await sock.waitFor('WATCHDOG=1', 10_000);
  notifier.stopping();
  const stopping = await sock.waitFor('STOPPING=1');
  assert.ok(stopping.includes('STATUS=stopping'), JSON.stringify(stopping));
});

void test('no watchdog without a valid $WATCHDOG_USEC or without $NOTIFY_SOCKET; pings at a third, never under 1 s', () => {
  assert.equal(watchdogIntervalMs({ NOTIFY_SOCKET: '/run/x' }), null);
  assert.equal(watchdogIntervalMs({ NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: 'soon' }), null);
  assert.equal(watchdogIntervalMs({ NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: '0' }), null);
  assert.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000' }), null);
  assert.equal(watchdogIntervalMs({ NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: '30000000' }), 10_000);
  assert.equal(watchdogIntervalMs({ NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: '900000' }), 1000);
});

void test('without $NOTIFY_SOCKET nothing is sent; a control notifier with one is, through the same binary', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-notify-unset-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fake = join(dir, 'fake-systemd-notify');
  // Leaves ran.<socket name>: "ran." for a call without $NOTIFY_SOCKET.
  writeFileSync(fake, `#!/bin/sh\ntouch "${dir}/ran.$(basename "$NOTIFY_SOCKET")"\n`);
  chmodSync(fake, 0o755);
  const unset = createNotifier({}, capturingLogger().logger, fake);
  const control = createNotifier({ NOTIFY_SOCKET: join(dir, 'control') }, capturingLogger().logger, fake);
  t.after(() => [unset, control].forEach((n) => n.stop()));
  unset.ready();
  unset.stopping();
  control.stopping();
  for (let i = 0; i < 250 && !existsSync(join(dir, 'ran.control')); i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(existsSync(join(dir, 'ran.control')), true, 'the control notifier ran the binary');
  assert.equal(existsSync(join(dir, 'ran.')), false, 'the notifier without $NOTIFY_SOCKET did not');
});

void test('a missing systemd-notify binary is logged once and then left alone, never thrown', async (t) => {
  const sock = await socketIn(t);
  const { logger, lines } = capturingLogger();
  const notifier = createNotifier({ NOTIFY_SOCKET: sock.path, WATCHDOG_USEC: '3000000' }, logger, '/nonexistent/systemd-notify');
  t.after(() => notifier.stop());
  const waitForWarning = async (log: string[]) => {
    for (let i = 0; i < 250 && log.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  };
  notifier.ready();
  await waitForWarning(lines);
  notifier.stopping();
  notifier.startWatchdog();
  // Positive control: a second broken notifier's first (and only) spawn fails and warns. A spawn by
  // the first notifier after its breakage would have failed and warned by then too.
  const control = capturingLogger();
  const other = createNotifier({ NOTIFY_SOCKET: sock.path }, control.logger, '/nonexistent/systemd-notify');
  t.after(() => other.stop());
  other.stopping();
  await waitForWarning(control.lines);
  assert.equal(control.lines.length, 1, 'the control notifier warned');
  assert.equal(lines.length, 1, lines.join(''));
  const entry = JSON.parse(lines[0]!) as { level: number; msg: string };
  assert.equal(entry.level, 40);
  assert.match(entry.msg, /cannot notify systemd/);
  assert.deepEqual(sock.datagrams(), []);
});

void test('the systemd-notify child sees $NOTIFY_SOCKET and $PATH only, never the brain\'s secrets', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-notify-env-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fake = join(dir, 'fake-systemd-notify');
  // Written aside and renamed: the test polls for env.txt and must never read it half-written.
  writeFileSync(fake, `#!/bin/sh\nenv > ${join(dir, 'env.tmp')} && mv ${join(dir, 'env.tmp')} ${join(dir, 'env.txt')}\n`);
  chmodSync(fake, 0o755);
  const before = process.env.SVC_VAULT_KEY;
  process.env.SVC_VAULT_KEY = 'a'.repeat(64);
  t.after(() => (before === undefined ? delete process.env.SVC_VAULT_KEY : (process.env.SVC_VAULT_KEY = before)));
  const notifier = createNotifier({ NOTIFY_SOCKET: join(dir, 'notify.sock'), PATH: '/usr/bin:/bin' }, capturingLogger().logger, fake);
  t.after(() => notifier.stop());
  notifier.stopping();
  for (let i = 0; i < 250 && !existsSync(join(dir, 'env.txt')); i++) await new Promise((r) => setTimeout(r, 20));
  const names = readFileSync(join(dir, 'env.txt'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.slice(0, l.indexOf('=')))
    .filter((n) => n !== 'PWD' && n !== 'SHLVL' && n !== '_'); // set by sh itself
  assert.deepEqual(names.sort(), ['NOTIFY_SOCKET', 'PATH']);
});
