import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { AnnounceBody, CompletePairBody, MintPairBody, VerifyPinBody } from '../../protocol/pairing';

void test('input schemas: bounds on every field a device or person sends', () => {
  assert.ok(Value.Check(MintPairBody, { kind: 'node', node_id: 'esp32:kitchen-1', pin: true, ttl_seconds: 600, name: 'Kitchen' }));
  assert.ok(Value.Check(MintPairBody, { pin: '12345678' }));
  for (const bad of [{ pin: '123' }, { pin: 1234 }, { ttl_seconds: 59 }, { ttl_seconds: 86_401 }, { name: '' }, { name: 'x'.repeat(65) }, { node_id: 'a/b' }, { extra: 1 }]) assert.ok(!Value.Check(MintPairBody, bad), JSON.stringify(bad));
  assert.ok(!Value.Check(CompletePairBody, { token: 'x'.repeat(65) }));
  assert.ok(!Value.Check(VerifyPinBody, { token: 'svcpt_x', pin: '1'.repeat(17) }));
  assert.ok(Value.Check(AnnounceBody, { code: '123 456', node_id: 'n', firmware: 'extra fields of HUP SDKs are ignored' }));
  assert.ok(!Value.Check(AnnounceBody, { code: '1234567', node_id: 'n' }));
});
