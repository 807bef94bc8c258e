import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { inApiNamespace } from '../../../daemon/http/auth';

void test('inApiNamespace reads the namespace the way a router might, and only the first segment', () => {
  for (const target of ['/api', '/api/', '/v1', '/api?x', '/v1?x', '/%61pi/x', '/%2561pi/x', '/API/x', '/Api./x', '/api;x=1/y', '//api//x', 'http://h:1/api/x', 'HTTPS://h/v1/session', '/api\\x', '/api#x', '/%41%50%49']) {
    assert.equal(inApiNamespace(target), true, target);
  }
  for (const target of ['/', '/health', '/metrics', '/apix', '/x/api', '/v12', '/%zz', 'http://h/', '/ap%69x']) {
    assert.equal(inApiNamespace(target), false, target);
  }
});

void test('property: no encoding, case, suffix or absolute form of an API path leaves the namespace', () => {
  const namespace = fc.constantFrom('api', 'v1');
  const segment = fc.stringMatching(/^[a-z0-9_-]{0,12}$/);
  const respell = (c: string, how: number): string => (how === 0 ? c : how === 1 ? c.toUpperCase() : how === 2 ? `%${c.charCodeAt(0).toString(16)}` : `%25${c.charCodeAt(0).toString(16)}`);
  fc.assert(
    fc.property(namespace, fc.array(fc.nat(3), { minLength: 3, maxLength: 3 }), fc.array(segment, { maxLength: 4 }), fc.constantFrom('', '?x', ';p=1', '#f', '.', '/'), fc.constantFrom('', 'http://127.0.0.1:9090', 'https://brain.invalid'), fc.constantFrom('/', '//', '\\'), (ns, hows, rest, suffix, origin, sep) => {
      const spelled = [...ns].map((c, i) => respell(c, hows[i] ?? 0)).join('');
      const target = `${origin}/${spelled}${suffix}${rest.map((s) => `${sep}${s}`).join('')}`;
      return inApiNamespace(target);
    }),
    { numRuns: 2000 },
  );
});
