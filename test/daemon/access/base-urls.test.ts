// baseUrls: one URL per address of this machine that the listener covers, never loopback or IPv6
// link-local, IPv4 first, no duplicates (property), and none before the listener is bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo } from 'node:os';
import fc from 'fast-check';
import { baseUrls, type Interfaces } from '../../../daemon/access/base-urls';
import type { ListenAddress } from '../../../daemon/kernel/listener';

const at = (...hosts: string[]): ListenAddress[] => hosts.map((host) => ({ host, family: host.includes(':') ? 'IPv6' : 'IPv4', port: 9090 }));

const v4 = (address: string, internal = false): NetworkInterfaceInfo => ({ address, netmask: '255.255.255.0', family: 'IPv4', mac: '02:00:00:00:00:01', internal, cidr: `${address}/24` });
const v6 = (address: string, internal = false): NetworkInterfaceInfo => ({ address, netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', mac: '02:00:00:00:00:01', internal, cidr: `${address}/64`, scopeid: 0 });

void test('lan: every non-loopback address, link-local IPv6 left out, IPv4 first', () => {
  const interfaces: Interfaces = { lo: [v4('127.0.0.1', true), v6('::1', true)], wlan0: [v6('fd00::20'), v4('192.168.1.20'), v6('fe80::1c2f:1')], tailscale0: [v4('100.101.102.103')] };
  assert.deepEqual(baseUrls(at('0.0.0.0', '::'), interfaces), ['http://192.168.1.20:9090', 'http://100.101.102.103:9090', 'http://[fd00::20]:9090']);
  assert.deepEqual(baseUrls(at('0.0.0.0'), interfaces), ['http://192.168.1.20:9090', 'http://100.101.102.103:9090'], 'no IPv6 listener, no IPv6 URL');
  assert.deepEqual(baseUrls(at('127.0.0.1', '::1'), interfaces), [], 'localhost: nothing another device can use');
  assert.deepEqual(baseUrls(at('192.168.1.20'), interfaces), ['http://192.168.1.20:9090'], 'a pinned address: only itself');
  assert.deepEqual(baseUrls([], interfaces), [], 'not listening yet');
});

void test('URLs are well-formed, distinct, carry the port, and never name a loopback address (property)', () => {
  // fe80::/10 by the value of the first group ([fe8::] is 0fe8::, a global address, not link-local).
  const linkLocal = (hostname: string): boolean => hostname.startsWith('[') && (parseInt(hostname.slice(1).split(':')[0] || '0', 16) & 0xffc0) === 0xfe80;
  const octet = fc.nat(255);
  const address = fc.oneof(
    fc.tuple(octet, octet, octet, octet).map((p) => v4(p.join('.'), p[0] === 127)),
    fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 }).map((g) => v6(g.map((n) => n.toString(16)).join(':'))),
  );
  fc.assert(
    fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.array(address, { maxLength: 4 })), (interfaces) => {
      const urls = baseUrls(at('0.0.0.0', '::'), interfaces);
      assert.equal(new Set(urls).size, urls.length);
      for (const url of urls) {
        const parsed = new URL(url);
        assert.equal(parsed.port, '9090');
        assert.ok(!parsed.hostname.startsWith('127.') && !linkLocal(parsed.hostname), url);
      }
      const firstV6 = urls.findIndex((u) => u.startsWith('http://['));
      assert.ok(firstV6 === -1 || urls.slice(firstV6).every((u) => u.startsWith('http://[')), 'IPv4 first');
    }),
  );
});
