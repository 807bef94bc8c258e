import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { FastifyPluginAsync } from 'fastify';
import { checkRouteDeclaration, inApiNamespace, PUBLIC } from '../../../daemon/http/auth';
import type { CredentialVerifier } from '../../../daemon/auth/authenticate';
import { principalId, type Principal, type PrincipalKind } from '../../../daemon/auth/principal';
import { auth, testApp } from '../../helpers/app';

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

// The route gate on a real fastify app (app.inject): a fake device credential store plugged in
// through the CredentialVerifier port, next to the API token.
const PHONE: Principal = { kind: 'device', id: 'phone-1', deviceKind: 'phone', scopes: ['chat'] };
const DEVICE_TOKEN = 'device-token-abcdef';
const devices: CredentialVerifier = { verify: (c) => (c.token === DEVICE_TOKEN ? PHONE : undefined) };
const asDevice = { authorization: `Bearer ${DEVICE_TOKEN}` };

const whoami: FastifyPluginAsync = async (app) => {
  app.get('/api/admin-only', async (request) => ({ principal: principalId(request.principal) }));
  app.get('/api/for-devices', { config: { principals: ['admin', 'device'] } }, async (request) => ({ principal: principalId(request.principal) }));
  app.post('/api/for-devices', { config: { principals: ['device'] } }, async (request) => ({ principal: principalId(request.principal) }));
  app.get('/public-probe', { config: { principals: PUBLIC } }, async (request) => ({ principal: principalId(request.principal) }));
};

type Envelope = { error: { code: string; message: string; details: unknown } };

void test('a device reaches a route that accepts devices, and gets 403 FORBIDDEN from one that does not', async (t) => {
  const { app } = await testApp({ routes: [whoami], verifiers: [devices] });
  t.after(() => app.close());
  const ok = await app.inject({ method: 'GET', url: '/api/for-devices', headers: asDevice });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.deepEqual(ok.json(), { principal: 'device:phone-1' });
  assert.deepEqual((await app.inject({ method: 'GET', url: '/api/for-devices', headers: auth })).json(), { principal: 'admin' });
  const refused = await app.inject({ method: 'GET', url: '/api/admin-only', headers: asDevice });
  assert.equal(refused.statusCode, 403);
  assert.deepEqual(refused.json(), { error: { code: 'FORBIDDEN', message: 'this route does not accept device credentials', details: { principal: 'device', accepts: ['admin'] } } });
  assert.equal(refused.headers.connection, 'close', 'a refused request is closed, its body never read');
  // A route for devices alone refuses the admin the same way.
  assert.equal((await app.inject({ method: 'POST', url: '/api/for-devices', headers: auth, payload: {} })).statusCode, 403);
  assert.deepEqual((await app.inject({ method: 'POST', url: '/api/for-devices', headers: asDevice, payload: {} })).json(), { principal: 'device:phone-1' });
});

void test('401 is "who are you?": no credential or an unknown one, whatever the route accepts', async (t) => {
  const { app } = await testApp({ routes: [whoami], verifiers: [devices] });
  t.after(() => app.close());
  for (const url of ['/api/admin-only', '/api/for-devices', '/api/unknown']) {
    for (const [headers, message] of [[{}, 'missing bearer token'], [{ authorization: 'Bearer device-token-abcdeX' }, 'invalid bearer token'], [{ authorization: 'Basic eDp5' }, 'invalid bearer token']] as const) {
      const r = await app.inject({ method: 'GET', url, headers });
      assert.equal(r.statusCode, 401, `${url} ${JSON.stringify(headers)}`);
      assert.equal(r.json<Envelope>().error.code, 'UNAUTHORIZED');
      assert.equal(r.json<Envelope>().error.message, message);
    }
  }
  // Any principal's credential opens the API namespace far enough to learn a path does not exist.
  assert.equal((await app.inject({ method: 'GET', url: '/api/unknown', headers: asDevice })).statusCode, 404);
  assert.equal((await app.inject({ method: 'GET', url: '/api/unknown', headers: auth })).statusCode, 404);
});

void test('a public route reads no credential: anyone, even with a wrong one, is anonymous there', async (t) => {
  const { app } = await testApp({ routes: [whoami], verifiers: [devices] });
  t.after(() => app.close());
  for (const headers of [{}, auth, asDevice, { authorization: 'Bearer wrong' }, { authorization: 'Basic eDp5' }]) {
    const r = await app.inject({ method: 'GET', url: '/public-probe', headers });
    assert.equal(r.statusCode, 200);
    assert.deepEqual(r.json(), { principal: 'anonymous' });
    assert.equal((await app.inject({ method: 'GET', url: '/health', headers })).statusCode, 200);
  }
});

void test('a route declaration that cannot work fails the start', async () => {
  for (const principals of [[], ['anonymous', 'admin'], ['root'], 'admin']) {
    const bad: FastifyPluginAsync = async (app) => {
      app.get('/api/bad', { config: { principals: principals as readonly PrincipalKind[] } }, async () => ({}));
    };
    await assert.rejects(testApp({ routes: [bad] }), /route \/api\/bad: config\.principals/, JSON.stringify(principals));
  }
  assert.doesNotThrow(() => checkRouteDeclaration('/x', undefined));
  assert.doesNotThrow(() => checkRouteDeclaration('/x', ['admin', 'device', 'node', 'peer']));
});
