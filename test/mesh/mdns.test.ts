// mesh/mdns.ts around bonjour-service, without a socket: a stand-in Bonjour class records what the
// advertiser asks of it (real multicast is test/e2e/mesh-mdns.test.ts, inside network namespaces).
// The real package is loaded here too, only to check the shape this code relies on (its class as the
// default export), without constructing it: constructing opens UDP 5353 on the machine's network.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { MdnsAdvertiser, MdnsError, type BonjourModule, type MdnsLog } from '../../mesh/mdns';

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
  class FakeBonjour {
    server = options.noSocket ? {} : { mdns: socket };
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
  return { log, socket, load, loads: () => loads };
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
