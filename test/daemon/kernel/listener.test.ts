// covered(): which open connections a set of bound hosts still serves (the listener closes the rest
// when the access mode moves it, docs/access.md), as a property over IPv4 and IPv6 addresses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isIPv4 } from 'node:net';
import fc from 'fast-check';
import { covered, type ListenAddress } from '../../../daemon/kernel/listener';

const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join('.'));
const v6 = fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 }).map((g) => g.map((n) => n.toString(16)).join(':'));
const at = (...hosts: string[]): ListenAddress[] => hosts.map((host) => ({ host, family: host.includes(':') ? 'IPv6' : 'IPv4', port: 1 }));

void test('covered(): wildcards cover their family, a specific host only itself (property)', () => {
  fc.assert(
    fc.property(fc.oneof(v4, v6), (address) => {
      const four = isIPv4(address);
      assert.equal(covered(at('0.0.0.0'), address), four);
      assert.equal(covered(at('0.0.0.0', '::'), address), true);
      assert.equal(covered(at('::'), address), true, ':: alone is dual-stack');
      assert.equal(covered(at('127.0.0.1', '::1'), address), address === '127.0.0.1' || address === '0:0:0:0:0:0:0:1');
      assert.equal(covered(at(address), address), true);
      if (four) assert.equal(covered(at(address), `::ffff:${address}`), true, 'an IPv4-mapped address is its IPv4 address');
    }),
  );
  assert.equal(covered(at('0.0.0.0', '::'), '::ffff:10.0.0.2'), true);
  assert.equal(covered(at('127.0.0.1'), undefined), false);
});
