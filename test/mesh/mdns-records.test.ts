// What the brain advertises (the TXT records docs/mesh.md lists) and the parser of what a browser
// receives: anything from the network is either a checked service or ignored with a reason, never
// an exception; what the brain advertises always reads back as itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { brainServices, hostLabel, instanceName, mdnsHost, readService, SERVICE_TYPES, type BrainAdvertisement, type RawService } from '../../mesh/mdns-records';

const ID = '1a2b3c4d-1111-4222-8333-444455556666';
const ad: BrainAdvertisement = { brainId: ID, version: '0.1.0', port: 9090, tls: false, hostname: 'raspberrypi', sync: true };

void test('a brain advertises _svc._tcp, _feral-brain._tcp and _svc-sync._tcp on <hostname>.local with the documented TXT records', () => {
  assert.deepEqual(brainServices(ad), [
    { kind: 'api', name: 'svc-raspberrypi-1a2b3c4d', type: 'svc', host: 'raspberrypi.local', port: 9090, txt: { version: '0.1.0', brain_id: ID, api_path: '/api', tls: '0' } },
    { kind: 'node', name: 'svc-raspberrypi-1a2b3c4d', type: 'feral-brain', host: 'raspberrypi.local', port: 9090, txt: { version: '1', node_path: '/v1/node', tls: '0' } },
    { kind: 'sync', name: 'svc-raspberrypi-1a2b3c4d', type: 'svc-sync', host: 'raspberrypi.local', port: 9090, txt: { version: '1', brain_id: ID, sync_path: '/sync', tls: '0' } },
  ]);
  assert.deepEqual(brainServices({ ...ad, sync: false }).map((s) => s.kind), ['api', 'node'], 'SVC_SYNC_DISABLED drops the sync service only');
  assert.ok(brainServices({ ...ad, tls: true }).every((s) => s.txt.tls === '1'));
});

void test('host names become one mDNS label', () => {
  assert.equal(hostLabel('raspberrypi'), 'raspberrypi');
  assert.equal(hostLabel('Kitchen-Pi.home.arpa'), 'kitchen-pi');
  assert.equal(hostLabel('my_box 2'), 'my-box-2');
  assert.equal(hostLabel('---'), 'svc');
  assert.equal(hostLabel(''), 'svc');
  assert.equal(mdnsHost('pi'), 'pi.local');
  assert.equal(instanceName({ hostname: 'pi.lan', brainId: ID }), 'svc-pi-1a2b3c4d');
});

void test('property: any host name gives a label avahi can resolve (1-63 of a-z, 0-9, -, not at the ends)', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300 }), (name) => {
      const label = hostLabel(name);
      assert.match(label, /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/);
    }),
  );
});

/** What bonjour-service reports for one of `ad`'s services seen from another host. */
const asReceived = (record: ReturnType<typeof brainServices>[number], addresses: string[]): RawService => ({ name: record.name, type: record.type, host: record.host, port: record.port, addresses, txt: record.txt });

void test('property: every advertised service reads back as itself, with a URL to reach it', () => {
  const ads = fc.record({
    brainId: fc.uuid({ version: 4 }),
    version: fc.stringMatching(/^\d{1,3}\.\d{1,3}\.\d{1,3}$/),
    port: fc.integer({ min: 1, max: 65535 }),
    tls: fc.boolean(),
    hostname: fc.string({ maxLength: 80 }),
    sync: fc.boolean(),
  });
  fc.assert(
    fc.property(ads, fc.ipV4(), (a, ip) => {
      for (const record of brainServices(a)) {
        const read = readService(asReceived(record, [ip]));
        assert.ok('service' in read, JSON.stringify(read));
        const s = read.service;
        assert.equal(s.kind, record.kind);
        assert.equal(s.port, a.port);
        assert.equal(s.tls, a.tls);
        assert.equal(s.brainId, record.kind === 'node' ? null : a.brainId);
        assert.equal(s.baseUrl, `${a.tls ? 'https' : 'http'}://${ip}:${a.port}`);
        assert.equal(new URL(s.path, s.baseUrl).port, a.port === (a.tls ? 443 : 80) ? '' : String(a.port));
      }
    }),
  );
});

void test('services that do not check out are ignored with a reason', () => {
  const good = asReceived(brainServices(ad)[0]!, ['10.0.0.2']);
  const cases: [Partial<RawService>, RegExp][] = [
    [{ type: 'http' }, /not a service svc knows/],
    [{ name: '' }, /no instance name/],
    [{ host: 'bad host!' }, /bad host/],
    [{ port: 0 }, /bad port/],
    [{ port: 70000 }, /bad port/],
    [{ port: 80.5 }, /bad port/],
    [{ port: '80' }, /bad port/],
    [{ txt: { ...good.txt as object, tls: 'yes' } }, /bad tls flag/],
    [{ txt: { ...good.txt as object, api_path: 'http://evil/' } }, /bad api_path/],
    [{ txt: { ...good.txt as object, brain_id: 'x' } }, /bad brain_id/],
    [{ txt: { version: '1', api_path: '/api', tls: '0' } }, /no brain_id/],
  ];
  for (const [change, reason] of cases) {
    const read = readService({ ...good, ...change });
    assert.ok('ignored' in read && reason.test(read.ignored), `${JSON.stringify(change)}: ${JSON.stringify(read)}`);
  }
});

void test('addresses: IPv4 first, then a global IPv6 one, else the host name; junk addresses dropped; TXT keys case-insensitive', () => {
  const node = brainServices(ad)[1]!;
  const url = (addresses: unknown): string => {
    const read = readService({ ...asReceived(node, []), addresses });
    assert.ok('service' in read);
    return read.service.baseUrl;
  };
  assert.equal(url(['fe80::1', 'fd00::2', '10.0.0.2']), 'http://10.0.0.2:9090');
  assert.equal(url(['fe80::1', 'fd00::2']), 'http://[fd00::2]:9090');
  assert.equal(url(['fe80::1']), 'http://raspberrypi.local:9090');
  assert.equal(url(['not an ip', 7, null]), 'http://raspberrypi.local:9090');
  assert.equal(url('10.0.0.2'), 'http://raspberrypi.local:9090');
  const upper = readService({ ...asReceived(node, []), txt: { NODE_PATH: '/v2/node', TLS: '1', flag: true } });
  assert.ok('service' in upper);
  assert.equal(upper.service.path, '/v2/node');
  assert.equal(upper.service.tls, true);
  assert.deepEqual(upper.service.txt, { node_path: '/v2/node', tls: '1' }, 'a key without a value (true) is dropped');
});

void test('property: anything that arrives is a checked service or ignored, never an exception', () => {
  const anything = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.array(fc.string()), fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.boolean(), fc.integer())));
  const raw = fc.record(
    {
      name: anything,
      type: fc.oneof(anything, fc.constantFrom(...Object.values(SERVICE_TYPES))),
      host: fc.oneof(anything, fc.domain()),
      port: fc.oneof(anything, fc.integer({ min: -10, max: 70000 })),
      addresses: fc.oneof(anything, fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()))),
      txt: fc.oneof(anything, fc.record({ brain_id: fc.oneof(fc.uuid({ version: 4 }), fc.string()), tls: fc.constantFrom('0', '1', 'x'), api_path: fc.string(), sync_path: fc.string() }, { requiredKeys: [] })),
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(raw, (r) => {
      const read = readService(r);
      if ('ignored' in read) return;
      const s = read.service;
      assert.ok(Number.isInteger(s.port) && s.port >= 1 && s.port <= 65535);
      assert.ok(s.path.startsWith('/'));
      assert.doesNotThrow(() => new URL(s.path, s.baseUrl));
    }),
  );
});
