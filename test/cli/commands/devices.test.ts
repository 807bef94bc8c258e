import { test } from 'node:test';
import assert from 'node:assert/strict';
import { devices, describeDevices } from '../../../cli/commands/devices';
import { fakeBrain, io } from '../../helpers/cli-rig';
import type { ConnectedDevice, NodeHealthEntry } from '../../../protocol/hardware';

const paired = (id: string, connections: number) => ({ device_id: id, kind: 'phone' as const, name: `phone ${id}`, node_id: null, platform: null, paired_at: 1, pair_id: null, connections });
const thermo: ConnectedDevice = {
  device_id: 'thermo',
  name: 'Hall thermostat',
  type: 'thermostat',
  transport: 'mesh',
  bus: 'serial',
  node_id: 'board-1',
  online: true,
  last_seen: '2026-11-25T03:00:00.000Z',
  readings: { celsius: { value: 21.5, at: '2026-11-25T03:00:00.000Z' }, target: { value: 22, at: '2026-11-25T03:00:00.000Z' } },
  battery_pct: null,
  rssi: null,
  capabilities: ['temperature'],
  actions: [],
};
const node: NodeHealthEntry = { node_id: 'board-1', name: 'Board', node_type: 'rpi', online: true, freshness: 'fresh', heartbeat_age_s: 3.2, last_heartbeat_at: null, heartbeat_ms: 10_000, version: '0.1.0', uptime_s: 40, battery_pct: null, rssi: null, devices: 1, connected_at: null };

void test('svc devices: hardware devices with node, transport and readings, the nodes\' freshness, the paired count; --json; a refusal is exit 1', async (t) => {
  const brain = await fakeBrain(t, (s) => {
    if (s.url === '/api/devices/connected') return [200, { devices: [thermo, { ...thermo, device_id: 'plug', name: 'Plug', online: false, readings: {} }] }];
    if (s.url === '/api/nodes/health') return [200, { nodes: [node] }];
    if (s.url === '/api/devices/paired') return [200, { count: 2, devices: [paired('dev_a', 2), paired('dev_b', 0)] }];
    return [404, {}];
  });
  const out = io();
  assert.equal(await devices(brain.conn, out.io, false), 0);
  assert.match(out.text.out, /thermo\s+Hall thermostat\s+thermostat\s+mesh\s+board-1\s+online\s+celsius=21.5 target=22/);
  assert.match(out.text.out, /plug\s+Plug .* offline\s+-/);
  assert.match(out.text.out, /board-1\s+rpi\s+fresh\s+3 s ago\s+0.1.0\s+1/);
  assert.match(out.text.out, /2 paired, 1 with an open session/);
  const json = io();
  assert.equal(await devices(brain.conn, json.io, true), 0);
  const view = JSON.parse(json.text.out) as { devices: unknown[]; nodes: unknown[]; paired: unknown[] };
  assert.deepEqual([view.devices.length, view.nodes.length, view.paired.length], [2, 1, 2]);
  assert.match(describeDevices({ devices: [], nodes: [], paired: [] }), /no hardware devices.*node-agent run[\s\S]*no paired devices/);
  const refused = await fakeBrain(t, () => [401, { error: { code: 'UNAUTHORIZED', message: 'invalid bearer token', details: null } }]);
  const err = io();
  assert.equal(await devices(refused.conn, err.io, false), 1);
  assert.match(err.text.err, /invalid bearer token/);
});
