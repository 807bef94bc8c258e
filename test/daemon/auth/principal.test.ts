import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ADMIN, ANONYMOUS, AUTHENTICATED_KINDS, PRINCIPAL_KINDS, isPrincipalKind, principalId, type Principal } from '../../../daemon/auth/principal';
import { ADMIN_PRINCIPAL } from '../../../daemon/agent/session';

const principal: fc.Arbitrary<Principal> = fc.oneof(
  fc.constant(ADMIN),
  fc.constant(ANONYMOUS),
  fc.record({ kind: fc.constant('device' as const), id: fc.string(), deviceKind: fc.constantFrom('phone' as const, 'browser' as const), scopes: fc.array(fc.string(), { maxLength: 3 }) }),
  fc.record({ kind: fc.constantFrom('node' as const, 'peer' as const), id: fc.string() }),
);

/** What makes two principals the same one: kind and id (a device's scopes and kind may change). */
const identity = (p: Principal): string => JSON.stringify([p.kind, 'id' in p ? p.id : null]);

void test('principalId names each kind stably', () => {
  assert.equal(principalId(ADMIN), 'admin');
  assert.equal(principalId(ANONYMOUS), 'anonymous');
  assert.equal(principalId({ kind: 'device', id: 'd1', deviceKind: 'phone', scopes: ['chat'] }), 'device:d1');
  assert.equal(principalId({ kind: 'node', id: 'kitchen' }), 'node:kitchen');
  assert.equal(principalId({ kind: 'peer', id: 'brain:2' }), 'peer:brain:2');
  // Sessions opened before principals existed were keyed "admin": the admin keeps that key.
  assert.equal(principalId(ADMIN), ADMIN_PRINCIPAL);
});

void test('property: two principals share an id exactly when they are the same principal', () => {
  fc.assert(
    fc.property(principal, principal, (a, b) => (principalId(a) === principalId(b)) === (identity(a) === identity(b))),
    { numRuns: 2000 },
  );
  // Ids made to collide across kinds and separators.
  fc.assert(fc.property(fc.constantFrom('device', 'node', 'peer', 'admin', ':', 'device:'), fc.string(), (prefix, rest) => {
    const node = principalId({ kind: 'node', id: `${prefix}${rest}` });
    const peer = principalId({ kind: 'peer', id: `${prefix}${rest}` });
    return node !== peer && node !== 'admin' && peer !== 'anonymous';
  }));
});

void test('a device keeps its id whatever its scopes or kind of client', () => {
  fc.assert(
    fc.property(fc.string(), fc.array(fc.string()), fc.array(fc.string()), (id, s1, s2) =>
      principalId({ kind: 'device', id, deviceKind: 'phone', scopes: s1 }) === principalId({ kind: 'device', id, deviceKind: 'browser', scopes: s2 })),
  );
});

void test('the kinds: anonymous is not an authenticated kind; shared principals are frozen', () => {
  assert.deepEqual([...AUTHENTICATED_KINDS], ['admin', 'device', 'node', 'peer']);
  for (const kind of PRINCIPAL_KINDS) assert.equal(isPrincipalKind(kind), true);
  for (const value of ['root', 'Admin', '', null, 1, ['admin']]) assert.equal(isPrincipalKind(value), false, String(value));
  assert.ok(Object.isFrozen(ADMIN) && Object.isFrozen(ANONYMOUS) && Object.isFrozen(PRINCIPAL_KINDS));
});
