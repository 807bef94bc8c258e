// When the brain advertises: never in localhost mode, on a lan/remote access_mode (or, before the
// access capability has said, a bind beyond loopback), again when the port, the addresses or the
// sync flag change, goodbye on the way back to localhost and at shutdown; the bus hears
// mdns_advertised/mdns_withdrawn. A recording advertiser stands in for the multicast socket (the
// real one is exercised in test/e2e/mesh-mdns.test.ts inside network namespaces).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pino } from 'pino';
import { EventBus } from '../../../daemon/kernel/event-bus';
import type { AccessMode, BrainEvent } from '../../../daemon/kernel/events';
import type { ListenAddress } from '../../../daemon/kernel/listener';
import { MeshAdvertising, modeOf, type Advertiser } from '../../../daemon/discovery/mesh-advertising';
import type { BrainAdvertisement } from '../../../mesh/mdns-records';

const ID = '1a2b3c4d-1111-4222-8333-444455556666';

class RecordingAdvertiser implements Advertiser {
  calls: string[] = [];
  published: BrainAdvertisement | null = null;
  failNext = false;
  async publish(ad: BrainAdvertisement): Promise<void> {
    await Promise.resolve();
    if (this.failNext) {
      this.failNext = false;
      this.calls.push('publish failed');
      throw new Error('not announced');
    }
    this.calls.push(`publish ${ad.port}${ad.sync ? '' : ' nosync'}`);
    this.published = ad;
  }
  async unpublish(): Promise<void> {
    await Promise.resolve();
    if (this.published !== null) this.calls.push('unpublish');
    this.published = null;
  }
  async stop(): Promise<void> {
    await this.unpublish();
    this.calls.push('stop');
  }
}

function rig(options: { enabled?: boolean; sync?: boolean } = {}) {
  const bus = new EventBus<BrainEvent>((_owner, err) => {
    throw err;
  });
  const heard: BrainEvent[] = [];
  bus.on('test', (e) => {
    if (e.type === 'mdns_advertised' || e.type === 'mdns_withdrawn') heard.push(e);
  });
  const advertiser = new RecordingAdvertiser();
  let addresses = ['10.0.0.2'];
  let idReads = 0;
  const mesh = new MeshAdvertising({
    advertiser,
    bus,
    clock: { now: () => 1000 },
    logger: pino({ level: 'silent' }),
    enabled: options.enabled ?? true,
    sync: options.sync ?? true,
    version: '0.1.0',
    hostname: () => 'pi',
    brainId: () => {
      idReads += 1;
      return ID;
    },
    interfaceAddresses: () => [...addresses],
  });
  mesh.start();
  return {
    mesh,
    advertiser,
    heard,
    mode: (mode: AccessMode) => bus.emit({ type: 'access_mode', mode, urls: [], at: 1 }),
    setAddresses: (a: string[]) => (addresses = a),
    idReads: () => idReads,
  };
}

const bound = (host: string, port = 9090): ListenAddress[] => [{ host, family: host.includes(':') ? 'IPv6' : 'IPv4', port }];

void test('localhost mode: nothing is announced and the brain id is not even read', async () => {
  const r = rig();
  r.mesh.listening([...bound('127.0.0.1'), ...bound('::1')]);
  r.mode('localhost');
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, []);
  assert.deepEqual(r.heard, []);
  assert.equal(r.idReads(), 0);
});

void test('lan mode announces the bound port; the bus hears the .local name', async () => {
  const r = rig();
  r.mode('lan');
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, [], 'no port before the listener has bound');
  r.mesh.listening(bound('0.0.0.0', 43210));
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, ['publish 43210']);
  assert.deepEqual(r.advertiser.published, { brainId: ID, version: '0.1.0', port: 43210, tls: false, hostname: 'pi', sync: true });
  assert.deepEqual(r.heard, [{ type: 'mdns_advertised', host: 'pi.local', port: 43210, at: 1000 }]);
});

void test('before any access_mode, a bind beyond loopback counts as lan; once the access capability speaks, it decides', async () => {
  assert.equal(modeOf(bound('127.0.0.1')), 'localhost');
  assert.equal(modeOf([...bound('127.0.0.1'), ...bound('::1')]), 'localhost');
  assert.equal(modeOf(bound('::')), 'lan');
  assert.equal(modeOf(bound('192.168.1.20')), 'lan');
  const r = rig();
  r.mesh.listening(bound('0.0.0.0'));
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, ['publish 9090']);
  r.mode('localhost');
  r.mesh.listening(bound('0.0.0.0'));
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, ['publish 9090', 'unpublish']);
  assert.deepEqual(r.heard.map((e) => e.type), ['mdns_advertised', 'mdns_withdrawn']);
});

void test('an address change re-announces; an unchanged check does nothing', async () => {
  const r = rig();
  r.mode('lan');
  r.mesh.listening(bound('::'));
  await r.mesh.settled();
  r.mesh.checkAddresses();
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, ['publish 9090']);
  r.setAddresses(['10.0.0.3', 'fd00::3']);
  r.mesh.checkAddresses();
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, ['publish 9090', 'publish 9090']);
  assert.equal(r.heard.length, 2);
  assert.equal(r.idReads(), 1, 'the id is read once');
});

void test('remote mode on a loopback listener (a tunnel to loopback) is not on the LAN: nothing announced', async () => {
  const r = rig();
  r.mode('remote');
  r.mesh.listening([...bound('127.0.0.1'), ...bound('::1')]);
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, []);
  r.mesh.listening(bound('::'));
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, ['publish 9090']);
});

void test('mesh.advertise false: never announced, in any mode', async () => {
  const r = rig({ enabled: false });
  r.mode('lan');
  r.mesh.listening(bound('0.0.0.0'));
  r.mode('remote');
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, []);
});

void test('advertise_sync false (SVC_SYNC_DISABLED=1) announces without the sync service', async () => {
  const r = rig({ sync: false });
  r.mode('remote');
  r.mesh.listening(bound('0.0.0.0'));
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, ['publish 9090 nosync']);
});

void test('a failed announcement is logged and retried at the next check', async () => {
  const r = rig();
  r.advertiser.failNext = true;
  r.mesh.listening(bound('0.0.0.0'));
  await r.mesh.settled();
  assert.deepEqual(r.heard, []);
  r.mesh.checkAddresses();
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, ['publish failed', 'publish 9090']);
  assert.equal(r.heard.length, 1);
});

void test('stop says goodbye once and ignores later events', async () => {
  const r = rig();
  r.mode('lan');
  r.mesh.listening(bound('0.0.0.0'));
  await r.mesh.settled();
  await r.mesh.stop();
  r.mode('lan');
  r.mesh.listening(bound('0.0.0.0', 1234));
  await r.mesh.settled();
  assert.deepEqual(r.advertiser.calls, ['publish 9090', 'unpublish', 'stop']);
  assert.deepEqual(r.heard.map((e) => e.type), ['mdns_advertised', 'mdns_withdrawn']);
});

void test('property: after any sequence of modes, binds and address changes, what is announced is what the last state asks for', async () => {
  const step = fc.oneof(
    fc.record({ mode: fc.constantFrom<AccessMode>('localhost', 'lan', 'remote') }),
    fc.record({ bind: fc.constantFrom('127.0.0.1', '0.0.0.0', '::'), port: fc.integer({ min: 1, max: 3 }) }),
    fc.record({ addresses: fc.constantFrom(['10.0.0.2'], ['10.0.0.3'], []) }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 12 }), async (steps) => {
      const r = rig();
      let mode: AccessMode | null = null;
      let bind: { host: string; port: number } | null = null;
      for (const s of steps) {
        if ('mode' in s) {
          mode = s.mode;
          r.mode(s.mode);
        } else if ('bind' in s) {
          bind = { host: s.bind, port: s.port };
          r.mesh.listening(bound(s.bind, s.port));
        } else {
          r.setAddresses([...s.addresses]);
          r.mesh.checkAddresses();
        }
      }
      await r.mesh.settled();
      const effective = mode ?? (bind === null ? 'localhost' : modeOf(bound(bind.host)));
      const want = bind !== null && effective !== 'localhost' && modeOf(bound(bind.host)) === 'lan' ? bind.port : null;
      assert.equal(r.advertiser.published?.port ?? null, want, JSON.stringify(steps));
      const last = r.heard.at(-1);
      if (want === null) assert.ok(last === undefined || last.type === 'mdns_withdrawn');
      else assert.deepEqual(last, { type: 'mdns_advertised', host: 'pi.local', port: want, at: 1000 });
    }),
  );
});
