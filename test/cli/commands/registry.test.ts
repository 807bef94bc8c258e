// How the marketplace commands find a registry (flag, $SVC_REGISTRY_URL, the local brain) and which
// token they send, and how a registry's refusals read: no registry there, a missing reviewer token, an
// unreachable registry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callRegistry, RegistryError, resolveRegistry } from '../../../cli/commands/registry';
import { fakeBrain } from '../../helpers/cli-rig';

const BRAIN = { url: 'http://127.0.0.1:9090', token: 'brain-token', home: '/h' };

void test('--registry, else $SVC_REGISTRY_URL, else the local brain with its token; $SVC_REGISTRY_TOKEN is sent when set', () => {
  assert.deepEqual(resolveRegistry('http://r:1/', { SVC_REGISTRY_URL: 'http://env:2' }, BRAIN), { url: 'http://r:1', token: undefined, local: false });
  assert.deepEqual(resolveRegistry(undefined, { SVC_REGISTRY_URL: 'http://env:2', SVC_REGISTRY_TOKEN: 'rev' }, BRAIN), { url: 'http://env:2', token: 'rev', local: false });
  assert.deepEqual(resolveRegistry(undefined, {}, BRAIN), { url: BRAIN.url, token: 'brain-token', local: true });
});

void test('a 404 without an item is no registry there (the local brain: how to enable it); 401 says which token', async (t) => {
  const { conn, seen } = await fakeBrain(t, (s) => (s.url.includes('/review') ? [401, { error: { code: 'UNAUTHORIZED', message: 'missing bearer token', details: null } }] : [404, { error: { code: 'NOT_FOUND', message: 'Route not found', details: null } }]));
  const local = { url: conn.url, token: undefined, local: true };
  await assert.rejects(callRegistry(local, 'GET', '/items'), (err: unknown) => err instanceof RegistryError && err.code === 'NO_REGISTRY' && /registry\.enabled/.test(err.message));
  await assert.rejects(callRegistry({ ...local, local: false }, 'GET', '/review'), (err: unknown) => err instanceof RegistryError && /SVC_REGISTRY_TOKEN/.test(err.message));
  assert.deepEqual(seen.map((s) => s.url), ['/registry/v1/items', '/registry/v1/review']);
});

void test('an item the registry does not know stays a NOT_FOUND with its message; an unreachable registry is named', async (t) => {
  const { conn } = await fakeBrain(t, () => [404, { error: { code: 'NOT_FOUND', message: 'item "x" not found', details: { item: 'x' } } }]);
  await assert.rejects(callRegistry({ url: conn.url, token: undefined, local: false }, 'GET', '/items/x'), (err: unknown) => err instanceof RegistryError && err.code === 'NOT_FOUND' && err.message === 'item "x" not found');
  await assert.rejects(callRegistry({ url: 'http://127.0.0.1:1', token: undefined, local: false }, 'GET', '/items'), (err: unknown) => err instanceof RegistryError && /cannot reach the registry at http:\/\/127\.0\.0\.1:1/.test(err.message));
});
