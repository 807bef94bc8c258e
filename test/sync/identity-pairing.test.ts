// Brain pairing messages: each side's key is pinned only with a proof that it holds the private half,
// and the answer is bound to the request (token, both ids, both keys) and to the brain the pair URL named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acceptPairRequest, acceptPairResponse, pairRequest, pairResponse } from '../../sync/identity-pairing';
import { newIdentity, pinned } from './link-fixtures';

const TOKEN = 'svcpt_' + 'A'.repeat(43);

void test('an honest exchange pins each brain\'s key on the other', () => {
  const completing = newIdentity();
  const minting = newIdentity();
  const req = pairRequest(completing, TOKEN, 'Cabin');
  assert.deepEqual(acceptPairRequest(req, minting.brainId), pinned(completing));
  const res = pairResponse(minting, req, 'dev_1', 'House');
  assert.deepEqual(acceptPairResponse(res, req, minting.brainId), pinned(minting));
  assert.equal(req.name, 'Cabin');
});

void test('a request with a key it cannot sign for, another token, or this brain\'s own id is refused', () => {
  const completing = newIdentity();
  const minting = newIdentity();
  const req = pairRequest(completing, TOKEN);
  assert.equal(acceptPairRequest({ ...req, public_key: newIdentity().publicKey }, minting.brainId), null);
  assert.equal(acceptPairRequest({ ...req, token: 'svcpt_other' }, minting.brainId), null);
  assert.equal(acceptPairRequest({ ...req, brain_id: newIdentity().brainId }, minting.brainId), null);
  assert.equal(acceptPairRequest(req, completing.brainId), null);
});

void test('an answer from another brain, for another request, or with a swapped key is refused', () => {
  const completing = newIdentity();
  const minting = newIdentity();
  const req = pairRequest(completing, TOKEN);
  const res = pairResponse(minting, req, 'dev_1', 'House');
  assert.equal(acceptPairResponse(res, req, newIdentity().brainId), null, 'not the brain the pair URL named');
  assert.equal(acceptPairResponse(res, pairRequest(completing, 'svcpt_other'), minting.brainId), null, 'an answer to another request');
  assert.equal(acceptPairResponse({ ...res, public_key: newIdentity().publicKey }, req, minting.brainId), null);
  const spliced = pairResponse(newIdentity(), req, 'dev_1', 'House');
  assert.equal(acceptPairResponse({ ...spliced, brain_id: minting.brainId }, req, minting.brainId), null);
});
