import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeviceCredentials, devicePrincipalId, principalFor } from '../../../daemon/pairing/device-credentials';
import { newDeviceKey, newPairToken, secretHash } from '../../../mesh/pair-token';

void test('device keys verify as the principal of their kind until removed; other strings are never looked up', () => {
  const creds = new DeviceCredentials();
  const key = newDeviceKey();
  creds.add(secretHash(key), 'browser', 'dev_1');
  assert.deepEqual(creds.verify({ token: key }), principalFor('browser', 'dev_1'));
  assert.equal(creds.verify({ token: newDeviceKey() }), undefined);
  assert.equal(creds.verify({ token: newPairToken() }), undefined);
  creds.remove('dev_1');
  assert.equal(creds.verify({ token: key }), undefined);
  assert.equal(creds.size, 0);
  assert.equal(devicePrincipalId('node', 'dev_2'), 'node:dev_2');
  assert.equal(devicePrincipalId('brain', 'dev_3'), 'peer:dev_3');
  assert.equal(devicePrincipalId('phone', 'dev_4'), 'device:dev_4');
});

void test('a node key proves the node by its node_id (what it registers as on /v1/node), by its device id when paired without one; removed by device id', () => {
  const creds = new DeviceCredentials();
  const named = newDeviceKey();
  const bare = newDeviceKey();
  const phone = newDeviceKey();
  creds.add(secretHash(named), 'node', 'dev_1', 'board-1');
  creds.add(secretHash(bare), 'node', 'dev_2', null);
  creds.add(secretHash(phone), 'phone', 'dev_3', 'ignored');
  assert.deepEqual(creds.verify({ token: named }), { kind: 'node', id: 'board-1' });
  assert.deepEqual(creds.verify({ token: bare }), { kind: 'node', id: 'dev_2' });
  assert.equal(creds.verify({ token: phone })?.kind === 'device' && creds.verify({ token: phone })?.id, 'dev_3');
  creds.remove('dev_1');
  assert.equal(creds.verify({ token: named }), undefined);
});
