// core.credentials (daemon/auth/credential-check.ts): the brain's verifiers asked from inside a socket,
// bound after every capability exists; asking earlier is a bug that throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LateCredentialCheck } from '../../../daemon/auth/credential-check';
import { apiTokenVerifier } from '../../../daemon/auth/api-token';
import type { CredentialVerifier } from '../../../daemon/auth/authenticate';

const TOKEN = 'api-token-0123456789abcdef';
const nodes: CredentialVerifier = { verify: (c) => (c.token === 'svcdk_node' ? { kind: 'node', id: 'board-1' } : undefined) };

void test('verify asks the API token first, then the capabilities\' verifiers; unknown and empty credentials are nobody; before bind it throws', () => {
  const late = new LateCredentialCheck();
  assert.throws(() => late.check.verify(TOKEN), /before the brain bound its verifiers/);
  late.bind([apiTokenVerifier(TOKEN), nodes]);
  assert.deepEqual(late.check.verify(TOKEN), { kind: 'admin' });
  assert.deepEqual(late.check.verify('svcdk_node'), { kind: 'node', id: 'board-1' });
  assert.equal(late.check.verify('svcdk_other'), undefined);
  assert.equal(late.check.verify(''), undefined);
  const anonymous: CredentialVerifier = { verify: () => ({ kind: 'anonymous' }) };
  late.bind([anonymous, nodes]);
  assert.equal(late.check.verify('anything'), undefined, 'a verifier answering anonymous proves nobody, and ends the search');
});
