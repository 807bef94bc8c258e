import { test } from 'node:test';
import assert from 'node:assert/strict';
import { devices, describeDevices } from '../../../cli/commands/devices';
import { fakeBrain, io } from '../../helpers/cli-rig';

const device = (id: string, connections: number) => ({ device_id: id, kind: 'phone' as const, name: `phone ${id}`, node_id: null, platform: null, paired_at: 1, pair_id: null, connections });

void test('svc devices: paired devices with their state; --json; a refusal is exit 1', async (t) => {
  const brain = await fakeBrain(t, (s) => (s.url === '/api/devices/paired' ? [200, { count: 2, devices: [device('dev_a', 2), device('dev_b', 0)] }] : [404, {}]));
  const out = io();
  assert.equal(await devices(brain.conn, out.io, false), 0);
  assert.match(out.text.out, /dev_a\s+phone\s+phone dev_a\s+connected \(2\)/);
  assert.match(out.text.out, /dev_b .* not connected/);
  assert.match(out.text.out, /2 paired, 1 connected\n$/);
  const json = io();
  assert.equal(await devices(brain.conn, json.io, true), 0);
  assert.equal((JSON.parse(json.text.out) as unknown[]).length, 2);
  assert.match(describeDevices({ count: 0, devices: [] }), /no paired devices/);
  const refused = await fakeBrain(t, () => [401, { error: { code: 'UNAUTHORIZED', message: 'invalid bearer token', details: null } }]);
  const err = io();
  assert.equal(await devices(refused.conn, err.io, false), 1);
  assert.match(err.text.err, /invalid bearer token/);
});
