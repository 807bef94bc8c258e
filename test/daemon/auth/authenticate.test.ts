import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { authenticate, INVALID_CREDENTIAL, isAuthFailure, presentedToken, type CredentialSource, type CredentialVerifier, type PresentedCredential } from '../../../daemon/auth/authenticate';
import { apiTokenVerifier } from '../../../daemon/auth/api-token';
import { ADMIN, ANONYMOUS, type Principal } from '../../../daemon/auth/principal';

const TOKEN = 'admin-token-0123456789';
const PHONE: Principal = { kind: 'device', id: 'phone-1', deviceKind: 'phone', scopes: ['chat'] };

/** A device store of one credential, recording what it was asked. */
function deviceStore(token: string, principal: Principal = PHONE): CredentialVerifier & { asked: PresentedCredential[] } {
  const asked: PresentedCredential[] = [];
  return { asked, verify: (c) => (asked.push(c), c.token === token ? principal : undefined) };
}

const req = (headers: CredentialSource['headers'], query?: Record<string, unknown>): CredentialSource => ({ headers, query });
const upgrade = { upgrade: 'websocket' };

void test('no credential is anonymous; a known one is its principal; an unknown or malformed one fails', () => {
  const verifiers = [apiTokenVerifier(TOKEN), deviceStore('device-token')];
  assert.equal(authenticate(req({}), verifiers), ANONYMOUS);
  assert.equal(authenticate(req({ authorization: `Bearer ${TOKEN}` }), verifiers), ADMIN);
  assert.equal(authenticate(req({ authorization: 'bearer device-token' }), verifiers), PHONE);
  for (const authorization of ['Bearer nope', 'Bearer ', 'Basic YTpi', TOKEN, '', `Bearer ${TOKEN} extra`]) {
    assert.equal(authenticate(req({ authorization }), verifiers), INVALID_CREDENTIAL, authorization);
  }
});

void test('browsers present the credential as a subprotocol or access_token, on upgrade requests only', () => {
  const verifiers = [apiTokenVerifier(TOKEN)];
  assert.equal(authenticate(req({ ...upgrade, 'sec-websocket-protocol': `svc.v1, svc.bearer.${TOKEN}` }), verifiers), ADMIN);
  assert.equal(authenticate(req(upgrade, { access_token: TOKEN }), verifiers), ADMIN);
  assert.equal(authenticate(req({ ...upgrade, 'sec-websocket-protocol': 'svc.v1, svc.bearer.' }), verifiers), INVALID_CREDENTIAL);
  // Without Upgrade: websocket neither form is read (URLs end up in logs and proxies).
  assert.equal(authenticate(req({ 'sec-websocket-protocol': `svc.bearer.${TOKEN}` }), verifiers), ANONYMOUS);
  assert.equal(authenticate(req({}, { access_token: TOKEN }), verifiers), ANONYMOUS);
  // The header wins over the others.
  assert.equal(presentedToken(req({ ...upgrade, authorization: 'Bearer a', 'sec-websocket-protocol': 'svc.bearer.b' }, { access_token: 'c' })), 'a');
  assert.equal(presentedToken(req({ ...upgrade, 'sec-websocket-protocol': 'svc.bearer.b' }, { access_token: 'c' })), 'b');
});

void test('verifiers are asked in order, the first that knows the credential wins, and none sees an empty one', () => {
  const first = deviceStore('shared', { kind: 'node', id: 'n1' });
  const second = deviceStore('shared');
  assert.deepEqual(authenticate(req({ authorization: 'Bearer shared' }), [first, second]), { kind: 'node', id: 'n1' });
  assert.equal(second.asked.length, 0);
  assert.deepEqual(authenticate(req({ authorization: 'Bearer other' }), [first, second]), INVALID_CREDENTIAL);
  assert.deepEqual(second.asked, [{ scheme: 'bearer', token: 'other' }]);
  authenticate(req({ authorization: 'Bearer ' }), [first, second]);
  authenticate(req({}), [first, second]);
  assert.equal(first.asked.length + second.asked.length, 3, 'neither an empty bearer nor no credential reaches a verifier');
  assert.equal(isAuthFailure(INVALID_CREDENTIAL), true);
  assert.equal(isAuthFailure(ADMIN), false);
});

void test('property: a request is its verifier\'s principal exactly when it presents that verifier\'s credential', () => {
  const token = fc.stringMatching(/^[!-~]{1,40}$/);
  const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'BeArEr');
  fc.assert(
    fc.property(token, token, token, fc.constantFrom('admin', 'device', 'other'), scheme, fc.constantFrom(' ', '  ', '\t'), (admin, device, other, which, name, space) => {
      fc.pre(admin !== device);
      const presented = which === 'admin' ? admin : which === 'device' ? device : other;
      const result = authenticate(req({ authorization: `${name}${space}${presented}` }), [apiTokenVerifier(admin), deviceStore(device)]);
      const expected = presented === admin ? ADMIN : presented === device ? PHONE : INVALID_CREDENTIAL;
      return result === expected;
    }),
    { numRuns: 1000 },
  );
});
