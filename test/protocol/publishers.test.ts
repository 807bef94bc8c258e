// protocol/publishers.ts: the key id in the path and the raw base64 public key in the body are
// checked by pattern; the answers have exactly their fields.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { PublisherKeyList, PublisherKeyParams, PUBLISHER_KEYS_NAMESPACE, TrustPublisherBody, TrustPublisherResult, UntrustPublisherResult } from '../../protocol/publishers';

const KEY = 'Iaa+lzYQkcYe6YjnhrliDCHxknybmiwXrr1UdoF54Sk=';

void test('key ids and public keys are checked by pattern; bodies take nothing else', () => {
  assert.equal(PUBLISHER_KEYS_NAMESPACE, 'publisher_keys');
  for (const ok of ['a1b2c3d4e5f6a1b2c3d4e5f6', 'acme.tools', 'k:1']) assert.ok(Value.Check(PublisherKeyParams, { key_id: ok }), ok);
  for (const bad of ['', '-x', '.x', 'a b', 'a/b', 'x'.repeat(65)]) assert.ok(!Value.Check(PublisherKeyParams, { key_id: bad }), bad);
  assert.ok(Value.Check(TrustPublisherBody, { public_key: KEY }));
  for (const bad of [{ public_key: KEY.slice(1) }, { public_key: `${KEY}=` }, { public_key: KEY.replace('+', '-') }, { public_key: KEY, key_id: 'x' }, {}]) {
    assert.ok(!Value.Check(TrustPublisherBody, bad), JSON.stringify(bad));
  }
});

void test('answers have exactly their fields', () => {
  assert.ok(Value.Check(PublisherKeyList, { keys: [{ key_id: 'k', public_key: KEY }] }));
  assert.ok(!Value.Check(PublisherKeyList, { keys: [{ key_id: 'k', public_key: KEY, pinned_at: 1 }] }));
  assert.ok(Value.Check(TrustPublisherResult, { key_id: 'k', public_key: KEY, changed: false }));
  assert.ok(!Value.Check(TrustPublisherResult, { key_id: 'k', public_key: KEY }));
  assert.ok(Value.Check(UntrustPublisherResult, { key_id: 'k', removed: true }));
  assert.ok(!Value.Check(UntrustPublisherResult, { key_id: 'k', removed: false }));
});
