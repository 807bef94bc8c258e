// AccessControl with a recording listener (lan binds 0.0.0.0, which a unit test must not do on this
// machine; test/e2e/access-netns.test.ts does it inside a namespace), a real settings.json in a temp
// home, a scripted tunnel and the real event bus: each change is persisted, applied, announced with the
// base URLs, refused with the fix when it cannot be made, and leaves nothing behind when it fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { AccessControl, MODE_HOSTS, type TunnelPort } from '../../../daemon/access/access-control';
import type { AccessSettings } from '../../../daemon/access/access-settings';
import type { Interfaces } from '../../../daemon/access/base-urls';
import { TailscaleError } from '../../../daemon/access/tailscale';
import { AppError } from '../../../daemon/kernel/errors';
import { EventBus } from '../../../daemon/kernel/event-bus';
import type { BrainEvent } from '../../../daemon/kernel/events';
import type { ListenAddress, ListenerPort } from '../../../daemon/kernel/listener';

const PORT = 9090;

/** Binds nothing: records where it was told to listen and announces like HttpListener. */
class RecordingListener implements ListenerPort {
  hosts: string[] = [];
  calls: string[][] = [];
  started = false;
  fail: NodeJS.ErrnoException | null = null;
  private handlers: ((a: ListenAddress[]) => void)[] = [];
  constructor(readonly pinnedHost: string | null = null) {}
  addresses(): ListenAddress[] {
    return this.started ? this.hosts.map((host) => ({ host, family: host.includes(':') ? 'IPv6' : 'IPv4', port: PORT })) : [];
  }
  listen(hosts: readonly string[]): Promise<ListenAddress[]> {
    this.calls.push([...hosts]);
    if (this.fail) return Promise.reject(this.fail);
    this.hosts = [...hosts];
    if (this.started) this.announce();
    return Promise.resolve(this.addresses());
  }
  onListening(handler: (a: ListenAddress[]) => void): void {
    this.handlers.push(handler);
  }
  closedForwarded = 0;
  closeForwarded(): number {
    this.closedForwarded += 1;
    return 0;
  }
  /** What the http part does after the capabilities started. */
  start(): void {
    if (this.hosts.length === 0) this.hosts = [this.pinnedHost ?? '127.0.0.1'];
    this.started = true;
    this.announce();
  }
  private announce(): void {
    for (const h of this.handlers) h(this.addresses());
  }
}

class ScriptedTunnel implements TunnelPort {
  calls: string[] = [];
  serveError: TailscaleError | null = null;
  unserveError: TailscaleError | null = null;
  serve(target: string): Promise<string> {
    this.calls.push(`serve ${target}`);
    return this.serveError ? Promise.reject(this.serveError) : Promise.resolve('https://brain.tail1234.ts.net');
  }
  unserve(): Promise<void> {
    this.calls.push('unserve');
    return this.unserveError ? Promise.reject(this.unserveError) : Promise.resolve();
  }
}

const INTERFACES: Interfaces = {
  lo: [
    { address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: true, cidr: '127.0.0.1/8' },
    { address: '::1', netmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', family: 'IPv6', mac: '00:00:00:00:00:00', internal: true, cidr: '::1/128', scopeid: 0 },
  ],
  eth0: [
    { address: '192.168.1.20', netmask: '255.255.255.0', family: 'IPv4', mac: '02:00:00:00:00:01', internal: false, cidr: '192.168.1.20/24' },
    { address: 'fe80::1', netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', mac: '02:00:00:00:00:01', internal: false, cidr: 'fe80::1/64', scopeid: 2 },
    { address: 'fd00::20', netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', mac: '02:00:00:00:00:01', internal: false, cidr: 'fd00::20/64', scopeid: 0 },
  ],
};

interface Rig {
  control: AccessControl;
  listener: RecordingListener;
  tunnel: ScriptedTunnel;
  events: Extract<BrainEvent, { type: 'access_mode' }>[];
  file: string;
  settings(): unknown;
  interfaces: Interfaces;
}

function rig(t: { after(fn: () => unknown): void }, opts: { settings?: Partial<AccessSettings>; pinned?: string; file?: string; interfaces?: () => Interfaces } = {}): Rig {
  const home = mkdtempSync(join(tmpdir(), 'svc-access-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const file = join(home, 'settings.json');
  if (opts.file !== undefined) writeFileSync(file, opts.file);
  const listener = new RecordingListener(opts.pinned ?? null);
  const tunnel = new ScriptedTunnel();
  const bus = EventBus.logged<BrainEvent>(pino({ level: 'silent' }), 'event');
  const events: Rig['events'] = [];
  bus.on('test', (e) => {
    if (e.type === 'access_mode') events.push(e);
  });
  const box = { interfaces: INTERFACES };
  const control = new AccessControl({
    listener,
    bus,
    clock: { now: () => 1000 },
    logger: pino({ level: 'silent' }),
    settings: { mode: 'localhost', remote: false, address_poll_seconds: 0, ...opts.settings },
    settingsFile: file,
    tunnel,
    interfaces: opts.interfaces ?? (() => box.interfaces),
  });
  t.after(() => control.stop());
  return {
    control,
    listener,
    tunnel,
    events,
    file,
    settings: () => JSON.parse(readFileSync(file, 'utf8')) as unknown,
    get interfaces() {
      return box.interfaces;
    },
    set interfaces(value) {
      box.interfaces = value;
    },
  };
}

async function started(r: Rig): Promise<Rig> {
  await r.control.start();
  r.listener.start();
  return r;
}

const conflict = (details: Record<string, unknown>) => (err: unknown) => {
  assert.ok(err instanceof AppError, String(err));
  assert.equal(err.status, 409);
  for (const [k, v] of Object.entries(details)) assert.deepEqual((err.details as Record<string, unknown>)[k], v, k);
  return true;
};

void test('starts in localhost mode on 127.0.0.1 and ::1 and announces it with no URLs', async (t) => {
  const r = await started(rig(t));
  assert.deepEqual(r.listener.calls, [MODE_HOSTS.localhost]);
  assert.deepEqual(r.events, [{ type: 'access_mode', mode: 'localhost', urls: [], at: 1000 }]);
  assert.equal(r.control.status().pinned_host, null);
});

void test('lan: persisted first (other keys kept), the listener moves, the event lists one URL per usable address', async (t) => {
  const r = await started(rig(t, { file: JSON.stringify({ log: { level: 'debug' }, access: { address_poll_seconds: 5 } }) }));
  const status = await r.control.setListener('lan');
  assert.deepEqual(r.settings(), { log: { level: 'debug' }, access: { address_poll_seconds: 5, mode: 'lan', remote: false } });
  assert.deepEqual(r.listener.calls.at(-1), ['0.0.0.0', '::']);
  const urls = ['http://192.168.1.20:9090', 'http://[fd00::20]:9090'];
  assert.deepEqual(status.urls, urls, 'loopback and link-local are left out, IPv4 first');
  assert.deepEqual(r.events.at(-1), { type: 'access_mode', mode: 'lan', urls, at: 1000 });
  assert.equal(status.mode, 'lan');
  const again = r.events.length;
  await r.control.setListener('lan');
  assert.equal(r.events.length, again, 'the same mode again changes and announces nothing');
  await r.control.setListener('localhost');
  assert.deepEqual(r.events.at(-1)?.urls, []);
  assert.deepEqual((r.settings() as { access: unknown }).access, { address_poll_seconds: 5, mode: 'localhost', remote: false });
});

void test('a listener that cannot move: 409 with the code, settings.json and the mode as they were', async (t) => {
  const r = await started(rig(t));
  r.listener.fail = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' });
  await assert.rejects(r.control.setListener('lan'), conflict({ code: 'EADDRINUSE', hosts: ['0.0.0.0', '::'] }));
  assert.deepEqual(r.settings(), { access: { mode: 'localhost', remote: false } });
  assert.equal(r.control.status().mode, 'localhost');
});

void test('a pinned address is left alone: the mode follows it and changing it is a 409 that says how to unpin', async (t) => {
  const r = await started(rig(t, { pinned: '::', settings: { mode: 'localhost' } }));
  assert.deepEqual(r.listener.calls, [], 'start does not move a pinned listener');
  assert.equal(r.control.status().mode, 'lan');
  assert.equal((await r.control.setListener('lan')).pinned_host, '::');
  await assert.rejects(r.control.setListener('localhost'), conflict({ pinned_host: '::' }));
  await assert.rejects(r.control.setListener('localhost'), (err: AppError) => /svc access localhost/.test((err.details as { fix: string }).fix));
  const loopback = await started(rig(t, { pinned: '127.0.0.1' }));
  assert.equal(loopback.control.status().mode, 'localhost');
});

void test('remote-up serves loopback on the tailnet; remote-down returns to the mode before it', async (t) => {
  const r = await started(rig(t, { settings: { mode: 'lan' } }));
  const up = await r.control.remoteUp();
  assert.deepEqual(r.tunnel.calls, ['serve http://127.0.0.1:9090']);
  assert.equal(up.mode, 'remote');
  assert.equal(up.listener, 'lan');
  assert.deepEqual(up.tunnel, { provider: 'tailscale', state: 'up', url: 'https://brain.tail1234.ts.net', error: null, fix: null });
  assert.deepEqual(up.urls, ['https://brain.tail1234.ts.net', 'http://192.168.1.20:9090', 'http://[fd00::20]:9090']);
  assert.deepEqual(r.events.at(-1), { type: 'access_mode', mode: 'remote', urls: up.urls, at: 1000 });
  assert.deepEqual(r.settings(), { access: { mode: 'lan', remote: true } });
  await r.control.remoteUp();
  assert.equal(r.tunnel.calls.length, 1, 'already up: nothing asked of tailscale');

  assert.equal(r.listener.closedForwarded, 0);
  const down = await r.control.remoteDown();
  assert.deepEqual(r.tunnel.calls.at(-1), 'unserve');
  assert.equal(r.listener.closedForwarded, 1, 'the tunnel\'s open connections are closed');
  assert.equal(down.mode, 'lan');
  assert.equal(down.tunnel.state, 'off');
  assert.deepEqual(r.settings(), { access: { mode: 'lan', remote: false } });
  assert.equal(r.events.at(-1)?.mode, 'lan');
  await r.control.remoteDown();
  assert.equal(r.tunnel.calls.length, 2, 'not remote: remote-down asks nothing');
});

void test('remote-up without tailscale: 409 naming the reason and the fix; nothing persisted, mode unchanged', async (t) => {
  const r = await started(rig(t));
  r.tunnel.serveError = new TailscaleError({ reason: 'cli_missing', message: 'the Tailscale CLI is not installed', fix: 'install Tailscale' });
  await assert.rejects(r.control.remoteUp(), conflict({ tunnel: 'tailscale', reason: 'cli_missing', fix: 'install Tailscale' }));
  assert.equal(r.control.status().mode, 'localhost');
  assert.equal(r.control.status().tunnel.state, 'off');
  assert.throws(() => readFileSync(r.file), { code: 'ENOENT' });
});

void test('remote-down when tailscale is gone still returns to the previous mode; any other refusal keeps remote', async (t) => {
  const r = await started(rig(t, { settings: { remote: true } }));
  await r.control.remoteUp();
  r.tunnel.unserveError = new TailscaleError({ reason: 'permission_denied', message: 'Access denied', fix: 'sudo tailscale set --operator=pi' });
  await assert.rejects(r.control.remoteDown(), conflict({ reason: 'permission_denied' }));
  assert.equal(r.control.status().mode, 'remote');
  r.tunnel.unserveError = new TailscaleError({ reason: 'daemon_not_running', message: 'not running', fix: 'start it' });
  assert.equal((await r.control.remoteDown()).mode, 'localhost');
});

void test('remote kept from the last run: the tunnel comes up after the listener, or shows its error and fix', async (t) => {
  const ok = await started(rig(t, { settings: { remote: true } }));
  assert.equal(ok.control.status().mode, 'remote');
  await ok.control.remoteUp(); // queued behind the start's bring-up: resolves once it has run
  assert.deepEqual(ok.tunnel.calls, ['serve http://127.0.0.1:9090']);
  assert.ok(ok.events.some((e) => e.urls[0] === 'https://brain.tail1234.ts.net'));

  const failing = rig(t, { settings: { remote: true } });
  failing.tunnel.serveError = new TailscaleError({ reason: 'daemon_not_running', message: 'the Tailscale daemon is not running', fix: 'sudo systemctl enable --now tailscaled' });
  assert.equal(failing.control.status().tunnel.state, 'starting');
  await started(failing);
  await assert.rejects(failing.control.remoteUp());
  const tunnel = failing.control.status().tunnel;
  assert.deepEqual([tunnel.state, tunnel.error, tunnel.fix], ['error', 'the Tailscale daemon is not running', 'sudo systemctl enable --now tailscaled']);
  assert.equal(failing.control.status().mode, 'remote', 'still wanted: svc access remote-up retries, remote-down gives up');
});

void test('a change of the machine\'s addresses is announced; no change, no event; on loopback they are not read', async (t) => {
  let reads = 0;
  const local = await started(rig(t, { interfaces: () => ((reads += 1), INTERFACES) }));
  const before0 = reads;
  local.control.refreshAddresses();
  assert.equal(reads, before0, 'localhost mode: the interfaces are not read');
  const r = await started(rig(t, { settings: { mode: 'lan' } }));
  const before = r.events.length;
  r.control.refreshAddresses();
  assert.equal(r.events.length, before);
  r.interfaces = { eth0: [{ address: '10.0.0.7', netmask: '255.0.0.0', family: 'IPv4', mac: '02:00:00:00:00:01', internal: false, cidr: '10.0.0.7/8' }] };
  r.control.refreshAddresses();
  assert.deepEqual(r.events.at(-1)?.urls, ['http://10.0.0.7:9090']);
});

void test('a settings.json that is not an object is refused and left as it was', async (t) => {
  const r = await started(rig(t, { file: '[1]' }));
  await assert.rejects(r.control.setListener('lan'), /not a JSON object/);
  assert.equal(readFileSync(r.file, 'utf8'), '[1]');
  assert.equal(r.control.status().mode, 'localhost');
});
