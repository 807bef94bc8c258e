// mesh/mdns.ts around bonjour-service, without a socket: a stand-in Bonjour class records what the
// advertiser asks of it (real multicast is test/e2e/mesh-mdns.test.ts, inside network namespaces).
// The real package is loaded here too, only to check the shape this code relies on (its class as the
// default export), without constructing it: constructing opens UDP 5353 on the machine's network.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { browseMdns, discover, MdnsAdvertiser, MdnsError, type BonjourModule, type MdnsLog } from '../../mesh/mdns';

const ID = '1a2b3c4d-1111-4222-8333-444455556666';
const ad = { brainId: ID, version: '0.1.0', port: 9090, tls: false, hostname: 'pi', sync: true };

interface Published {
  name: string;
  type: string;
  host: string;
  port: number;
  probe: boolean;
  txt: Record<string, string>;
}

/** A Bonjour stand-in: publish() returns a service that comes up on the next tick (or never, with `silent`). */
function fakeModule(options: { silent?: boolean; noSocket?: boolean } = {}) {
  const log: string[] = [];
  const socket = new EventEmitter();
  const browsers: (EventEmitter & { type: string; updates: number; stopped: boolean })[] = [];
  class FakeBonjour {
    server = options.noSocket ? {} : { mdns: socket };
    find(opts: { type: string }): EventEmitter {
      const browser = Object.assign(new EventEmitter(), { type: opts.type, updates: 0, stopped: false });
      Object.assign(browser, { update: () => (browser.updates += 1), stop: () => (browser.stopped = true) });
      browsers.push(browser);
      return browser;
    }
    publish(config: Published): EventEmitter & { published: boolean; fqdn: string } {
      log.push(`publish ${config.name}._${config.type}._tcp probe=${config.probe} host=${config.host}`);
      const service = Object.assign(new EventEmitter(), { published: false, fqdn: `${config.name}._${config.type}._tcp.local` });
      if (!options.silent) setImmediate(() => ((service.published = true), service.emit('up')));
      return service;
    }
    unpublishAll(done: () => void): void {
      log.push('unpublishAll');
      setImmediate(done);
    }
    destroy(done?: () => void): void {
      log.push('destroy');
      if (done) setImmediate(done);
    }
  }
  let loads = 0;
  const load = (): Promise<BonjourModule> => {
    loads += 1;
    return Promise.resolve({ default: FakeBonjour as unknown as BonjourModule['default'] });
  };
  return { log, socket, load, loads: () => loads, browsers };
}

const quiet: MdnsLog = { warn: () => undefined, debug: () => undefined };

void test('bonjour-service exports its class as the default export (the shape openBonjour relies on)', async () => {
  const module = await import('bonjour-service');
  assert.equal(typeof module.default, 'function');
  assert.equal(typeof module.default.prototype.publish, 'function');
  assert.equal(typeof module.default.prototype.unpublishAll, 'function');
});

void test('nothing is loaded until the first publish; each service is announced, probed only the first time', async () => {
  const fake = fakeModule();
  const advertiser = new MdnsAdvertiser({ log: quiet, load: fake.load });
  assert.equal(fake.loads(), 0);
  await advertiser.publish(ad);
  assert.equal(fake.loads(), 1);
  assert.ok(advertiser.active);
  assert.deepEqual(fake.log, [
    'publish svc-pi-1a2b3c4d._svc._tcp probe=true host=pi.local',
    'publish svc-pi-1a2b3c4d._feral-brain._tcp probe=true host=pi.local',
    'publish svc-pi-1a2b3c4d._svc-sync._tcp probe=true host=pi.local',
  ]);
  fake.log.length = 0;
  await advertiser.publish({ ...ad, port: 9191, sync: false });
  assert.deepEqual(fake.log, ['unpublishAll', 'publish svc-pi-1a2b3c4d._svc._tcp probe=false host=pi.local', 'publish svc-pi-1a2b3c4d._feral-brain._tcp probe=false host=pi.local'], 'goodbye first; names it owns are not probed again');
  fake.log.length = 0;
  await advertiser.stop();
  assert.deepEqual(fake.log, ['unpublishAll', 'destroy']);
  assert.equal(advertiser.active, false);
  assert.equal(fake.loads(), 1);
});

void test('socket errors are logged, never an unhandled error event; a bonjour-service without its socket is refused', async () => {
  const fake = fakeModule();
  const warnings: string[] = [];
  const advertiser = new MdnsAdvertiser({ log: { warn: (_o, msg) => warnings.push(msg), debug: () => undefined }, load: fake.load });
  await advertiser.publish(ad);
  fake.socket.emit('error', Object.assign(new Error('bind EADDRINUSE'), { code: 'EADDRINUSE' }));
  assert.deepEqual(warnings, ['mDNS socket error (is UDP port 5353 usable?)']);
  await advertiser.stop();
  const broken = fakeModule({ noSocket: true });
  await assert.rejects(new MdnsAdvertiser({ log: quiet, load: broken.load }).publish(ad), MdnsError);
  assert.deepEqual(broken.log, ['destroy']);
});

void test('a service that never comes up (its name taken, multicast unsendable) fails the publish with the reason', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const fake = fakeModule({ silent: true });
  const advertiser = new MdnsAdvertiser({ log: quiet, load: fake.load });
  const publishing = advertiser.publish(ad);
  // Let the lazy load and the publish calls happen, then run the announce deadline.
  for (let i = 0; i < 10 && fake.log.length < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  t.mock.timers.tick(5000);
  await assert.rejects(publishing, (err: unknown) => err instanceof MdnsError && /was not announced within 5000 ms/.test(err.message));
});

/** A service as bonjour-service reports one the brain advertised, seen from 10.0.0.2. */
const raw = (type: string, txt: Record<string, string>, name = 'svc-pi-1a2b3c4d') => ({ name, type, host: 'pi.local', port: 9090, addresses: ['10.0.0.2'], txt });
const API_TXT = { version: '0.1.0', brain_id: ID, api_path: '/api', tls: '0' };

void test('browsing reports checked services, skips the rest with a debug line, and forgets what says goodbye', async () => {
  const fake = fakeModule();
  const debug: string[] = [];
  const ups: string[] = [];
  const downs: string[] = [];
  const browse = await browseMdns({ log: { warn: () => undefined, debug: (o) => debug.push(JSON.stringify(o)) }, load: fake.load, kinds: ['api', 'node'], onUp: (s) => ups.push(`${s.kind} ${s.baseUrl}`), onDown: (s) => downs.push(`${s.kind} ${s.name}`) });
  assert.deepEqual(fake.browsers.map((b) => b.type), ['svc', 'feral-brain']);
  const [api, node] = fake.browsers;
  api!.emit('up', raw('svc', API_TXT));
  api!.emit('up', raw('svc', { ...API_TXT, brain_id: 'nope' }, 'svc-evil'));
  node!.emit('up', raw('feral-brain', { version: '1', node_path: '/v1/node', tls: '0' }));
  assert.deepEqual(ups, ['api http://10.0.0.2:9090', 'node http://10.0.0.2:9090']);
  assert.equal(debug.length, 1);
  assert.match(debug[0]!, /bad brain_id/);
  assert.equal(browse.services().length, 2);
  api!.emit('down', raw('svc', API_TXT));
  api!.emit('down', raw('svc', API_TXT, 'svc-never-seen'));
  assert.deepEqual(downs, ['api svc-pi-1a2b3c4d']);
  assert.equal(browse.services().length, 1);
  await browse.stop();
  assert.ok(fake.browsers.every((b) => b.stopped));
  assert.equal(fake.log.at(-1), 'destroy');
});

void test('a browser asks again, less and less often (RFC 6762 §5.2)', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const fake = fakeModule();
  const browse = await browseMdns({ log: quiet, load: fake.load, kinds: ['sync'], onUp: () => undefined, requeryMs: 1000 });
  const browser = fake.browsers[0]!;
  const at: number[] = [];
  for (let ms = 1; ms <= 15_000; ms++) {
    const before = browser.updates;
    t.mock.timers.tick(1);
    if (browser.updates > before) at.push(ms);
  }
  assert.deepEqual(at, [1000, 3000, 7000, 15000]);
  await browse.stop();
});

void test('discover: the first service accepted, or null when none shows in time', async (t) => {
  const fake = fakeModule();
  const found = discover({ log: quiet, load: fake.load, kind: 'api', timeoutMs: 60_000, accept: (s) => s.brainId === ID });
  for (let i = 0; i < 10 && fake.browsers.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
  fake.browsers[0]!.emit('up', raw('svc', { ...API_TXT, brain_id: '9f8e7d6c-0000-4aaa-8bbb-0123456789ab' }, 'svc-other-9f8e7d6c'));
  fake.browsers[0]!.emit('up', raw('svc', API_TXT));
  assert.equal((await found)?.name, 'svc-pi-1a2b3c4d');
  assert.ok(fake.browsers[0]!.stopped);
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const none = fakeModule();
  const nothing = discover({ log: quiet, load: none.load, kind: 'node', timeoutMs: 5000 });
  for (let i = 0; i < 10 && none.browsers.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
  t.mock.timers.tick(5000);
  assert.equal(await nothing, null);
  assert.ok(none.browsers[0]!.stopped);
});
