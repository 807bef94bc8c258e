// daemon/publishers/publishers-capability.ts: trustPublisher over a vault (pins a key; the same key
// again changes nothing; another key under a pinned key id is a 409 until untrusted; a small-order or
// malformed key is a 400), and GET/PUT/DELETE /api/publishers/keys in an in-process brain (admin token;
// schema refusals in the spec envelope; untrusting an unknown key id is 404).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../daemon/kernel/errors';
import type { SecretStore } from '../../../daemon/kernel/capability';
import { trustPublisher } from '../../../daemon/publishers/publishers-capability';
import { PUBLISHER_KEYS_NAMESPACE } from '../../../protocol/publishers';
import { inProcessBrain } from '../../helpers/assembled-brain';
import { newKey } from '../skills/skills-rig';

/** The identity point: 32 bytes that node:crypto imports but that verify forged signatures. */
const SMALL_ORDER = Buffer.concat([Buffer.from([1]), Buffer.alloc(31)]).toString('base64');

function mapVault(): SecretStore & { data: Map<string, string> } {
  const data = new Map<string, string>();
  const k = (ns: string, key: string): string => `${ns}\u0000${key}`;
  return {
    data,
    get: (ns, key) => data.get(k(ns, key)),
    set: (ns, key, value) => void data.set(k(ns, key), value),
    delete: (ns, key) => data.delete(k(ns, key)),
    keys: (ns) => [...data.keys()].filter((x) => x.startsWith(`${ns}\u0000`)).map((x) => x.slice(ns.length + 1)),
    namespaces: () => [PUBLISHER_KEYS_NAMESPACE],
    status: () => ({ state: 'open' }),
  };
}

const status = (code: number) => (err: unknown): boolean => err instanceof AppError && err.status === code;

void test('trustPublisher: pins, repeats without change, refuses a second key under the same id, a small-order key and garbage', () => {
  const vault = mapVault();
  const a = newKey();
  const b = newKey();
  assert.equal(trustPublisher(vault, a.keyId, a.publicKey), true);
  assert.equal(vault.get(PUBLISHER_KEYS_NAMESPACE, a.keyId), a.publicKey);
  assert.equal(trustPublisher(vault, a.keyId, a.publicKey), false);
  assert.throws(() => trustPublisher(vault, a.keyId, b.publicKey), status(409));
  assert.equal(vault.get(PUBLISHER_KEYS_NAMESPACE, a.keyId), a.publicKey, 'the pinned key is not swapped');
  assert.throws(() => trustPublisher(vault, 'deadbeefdeadbeefdeadbeef', SMALL_ORDER), status(400));
  assert.throws(() => trustPublisher(vault, 'deadbeefdeadbeefdeadbeef', 'AAAA'), status(400));
  assert.equal(vault.get(PUBLISHER_KEYS_NAMESPACE, 'deadbeefdeadbeefdeadbeef'), undefined);
});

void test('/api/publishers/keys: trust, list, conflict, untrust, 404, schema refusals, admin only', { timeout: 30_000 }, async (t) => {
  const { brain, token } = await inProcessBrain(t);
  const api = (method: 'GET' | 'PUT' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = { authorization: `Bearer ${token}` }) =>
    brain.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  const a = newKey();
  const b = newKey();
  assert.deepEqual((await api('GET', '/api/publishers/keys')).json(), { keys: [] });
  assert.deepEqual((await api('PUT', `/api/publishers/keys/${a.keyId}`, { public_key: a.publicKey })).json(), { key_id: a.keyId, public_key: a.publicKey, changed: true });
  assert.deepEqual((await api('PUT', `/api/publishers/keys/${a.keyId}`, { public_key: a.publicKey })).json(), { key_id: a.keyId, public_key: a.publicKey, changed: false });
  const conflict = await api('PUT', `/api/publishers/keys/${a.keyId}`, { public_key: b.publicKey });
  assert.equal(conflict.statusCode, 409);
  assert.match(conflict.json<{ error: { message: string } }>().error.message, /untrust it first/);
  await api('PUT', `/api/publishers/keys/${b.keyId}`, { public_key: b.publicKey });
  assert.deepEqual((await api('GET', '/api/publishers/keys')).json(), { keys: [a, b].sort((x, y) => x.keyId.localeCompare(y.keyId)).map((k) => ({ key_id: k.keyId, public_key: k.publicKey })) });
  const small = await api('PUT', '/api/publishers/keys/deadbeefdeadbeefdeadbeef', { public_key: SMALL_ORDER });
  assert.equal(small.statusCode, 400, small.body);
  assert.match(small.json<{ error: { message: string } }>().error.message, /small-order/);
  for (const [url, body] of [
    ['/api/publishers/keys/-leading-dash', { public_key: a.publicKey }],
    [`/api/publishers/keys/${a.keyId}`, { public_key: 'short' }],
    [`/api/publishers/keys/${a.keyId}`, { public_key: a.publicKey, extra: 1 }],
  ] as const) {
    const res = await api('PUT', url, body);
    assert.equal(res.statusCode, 400, `${url} ${JSON.stringify(body)}: ${res.body}`);
    assert.equal(res.json<{ error: { code: string } }>().error.code, 'BAD_REQUEST');
  }
  assert.deepEqual((await api('DELETE', `/api/publishers/keys/${a.keyId}`)).json(), { key_id: a.keyId, removed: true });
  assert.equal((await api('DELETE', `/api/publishers/keys/${a.keyId}`)).statusCode, 404);
  assert.deepEqual((await api('PUT', `/api/publishers/keys/${a.keyId}`, { public_key: b.publicKey })).json<{ changed: boolean }>().changed, true, 'after untrust another key may be pinned');
  assert.equal((await api('GET', '/api/publishers/keys', undefined, {})).statusCode, 401);
});
