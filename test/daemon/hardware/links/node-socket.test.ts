// Which node key an upgrade request presents: Bearer header, then a feral-token- subprotocol entry,
// then ?api_key= — first hit wins. (The route itself runs in node-hub.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { presentedKey } from '../../../../daemon/hardware/links/node-socket';

void test('the Bearer header wins over the subprotocol and the query', () => {
  const key = presentedKey({ authorization: 'Bearer k1', 'sec-websocket-protocol': 'feral.hup.v1, feral-token-k2' }, { api_key: 'k3' });
  assert.deepEqual(key, { key: 'k1', via: 'header' });
  assert.deepEqual(presentedKey({ authorization: 'bearer   k1 ' }, {}), { key: 'k1', via: 'header' });
});

void test('a feral-token- entry anywhere in the subprotocol list is next, then ?api_key=', () => {
  assert.deepEqual(presentedKey({ 'sec-websocket-protocol': 'feral.hup.v1,feral-token-k2' }, { api_key: 'k3' }), { key: 'k2', via: 'subprotocol' });
  assert.deepEqual(presentedKey({ 'sec-websocket-protocol': 'feral.hup.v1' }, { api_key: 'k3' }), { key: 'k3', via: 'query' });
});

void test('no key, an empty key or a non-Bearer scheme is no key', () => {
  assert.equal(presentedKey({}, {}), null);
  assert.equal(presentedKey({ authorization: 'Basic a2V5' }, undefined), null);
  assert.equal(presentedKey({ 'sec-websocket-protocol': 'feral-token-' }, { api_key: '' }), null);
  assert.equal(presentedKey({}, { api_key: ['a', 'b'] }), null);
});
