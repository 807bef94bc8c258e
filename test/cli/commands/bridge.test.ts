// svc bridge: the node id of a bridge name; pair against an assembled brain on loopback (the reference
// phone-bridge client pairs from the URL svc printed while svc waits, and its key names the bridge's
// node); list formatting of phone_ble devices grouped by bridge, --json, and a refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { age, bridgeList, bridgeNodeId, bridgePair, bridgesOf, describeBridges } from '../../../cli/commands/bridge';
import type { Connection } from '../../../cli/connection';
import type { ConnectedDevice } from '../../../protocol/hardware';
import { NODE_ID_PATTERN } from '../../../protocol/node';
import { pairFromUrl } from '../../../phone-bridge/pair';
import { inProcessBrain } from '../../helpers/assembled-brain';
import { fakeBrain, io } from '../../helpers/cli-rig';

void test('bridgeNodeId: phone-<slug of the name>; always a node id', () => {
  assert.equal(bridgeNodeId('Kitchen Phone'), 'phone-kitchen-phone');
  assert.equal(bridgeNodeId('  Ada’s  Pixel 8!! '), 'phone-ada-s-pixel-8');
  assert.equal(bridgeNodeId('Café'), 'phone-cafe');
  assert.equal(bridgeNodeId('bridge'), 'phone-bridge');
  assert.equal(bridgeNodeId('日本'), 'phone-bridge', 'nothing left of the name: the default');
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (name) => {
      const id = bridgeNodeId(name);
      assert.match(id, new RegExp(NODE_ID_PATTERN));
      assert.match(id, /^phone-[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/);
      assert.ok(id.length <= 70);
    }),
  );
});

void test('svc bridge pair: a node token for phone-<name>; the reference client pairs from the printed URL while svc waits', async (t) => {
  const b = await inProcessBrain(t);
  const url = `http://127.0.0.1:${(b.brain.app.server.address() as AddressInfo).port}`;
  const conn: Connection = { url, token: b.token, home: b.home };
  const keyDir = mkdtempSync(join(tmpdir(), 'svc-bridge-keys-'));
  t.after(() => rmSync(keyDir, { recursive: true, force: true }));

  const refused = io();
  assert.equal(await bridgePair(conn, refused.io, { pin: false, wait: false, json: false }), 1, 'localhost mode');
  assert.match(refused.text.err, /fix: run `svc access lan`/);

  b.brain.bus.emit({ type: 'access_mode', mode: 'lan', urls: [url], at: 0 });
  const { text, io: cli } = io();
  const phone = io();
  const deps = {
    now: Date.now,
    sleep: async () => {
      const pairUrl = /svc:\/\/pair\?\S+/.exec(text.out)![0];
      assert.equal(await pairFromUrl({ url: pairUrl, keyDir, name: undefined, pin: undefined, platform: 'ios' }, { fetch: (u, init) => fetch(u, init), out: phone.io.out, err: phone.io.err }), 0, phone.text.err);
    },
  };
  assert.equal(await bridgePair(conn, cli, { name: 'Kitchen Phone', pin: false, wait: true, json: false }, deps), 0, text.err);
  assert.match(text.out, /^pairing a phone bridge "Kitchen Phone" as node phone-kitchen-phone\n/);
  assert.match(text.out, /node dist\/phone-bridge\.mjs pair/);
  assert.match(text.out, /▄/, 'a QR code');
  assert.match(text.out, /paired node "Kitchen Phone" as dev_/);
  assert.match(text.out, /svc bridge list/);
  assert.match(phone.text.out, /^paired bridge phone-kitchen-phone \("Kitchen Phone"\) as dev_/);
  assert.equal(statSync(join(keyDir, 'phone-kitchen-phone.key')).mode & 0o777, 0o600);
  const paired = (await (await fetch(`${url}/api/devices/paired`, { headers: { authorization: `Bearer ${b.token}` } })).json()) as { devices: { kind: string; node_id: string; platform: string }[] };
  assert.deepEqual(paired.devices.map((d) => [d.kind, d.node_id, d.platform]), [['node', 'phone-kitchen-phone', 'ios']]);

  const again = io();
  assert.equal(await bridgePair(conn, again.io, { name: 'Kitchen Phone', pin: false, wait: false, json: true }), 0);
  const minted = JSON.parse(again.text.out) as { url: string; payload: { kind: string } };
  assert.equal(minted.payload.kind, 'node');
  const second = io();
  assert.equal(await pairFromUrl({ url: minted.url, keyDir, name: undefined, pin: undefined, platform: 'ios' }, { fetch: (u, init) => fetch(u, init), out: second.io.out, err: second.io.err }), 1);
  assert.match(second.text.err, /already paired as (dev_[\w-]+); revoke it first to pair it again \(svc pair revoke \1\)/, 'one bridge per node id');
});

const NOW = Date.parse('2026-11-25T04:00:00Z');
const device = (over: Partial<ConnectedDevice>): ConnectedDevice => ({
  device_id: 'bulb',
  name: 'Bedside bulb',
  type: 'light',
  transport: 'phone_ble',
  bus: 'phone_ble',
  node_id: 'phone-kitchen',
  online: true,
  last_seen: '2026-11-25T03:59:58Z',
  readings: {},
  battery_pct: null,
  rssi: null,
  capabilities: ['led'],
  actions: [],
  ...over,
});

const DEVICES: ConnectedDevice[] = [
  device({ device_id: 'hr_strap', name: 'Chest strap', type: 'heart_rate_monitor', battery_pct: 87, readings: { bpm: { value: 72, at: '2026-11-25T03:59:48Z' } } }),
  device({}),
  device({ device_id: 'thermo', name: 'Thermostat', type: 'thermostat', transport: 'mesh', bus: 'serial', node_id: 'rpi-hall' }),
  device({ device_id: 'scale', name: 'Scale', type: 'scale', node_id: 'phone-ada', online: false, readings: { kg: { value: 71.5, at: '2026-11-23T03:00:00Z' } } }),
];

void test('bridgesOf and describeBridges: phone_ble devices only, grouped by bridge, online state, battery and last readings', () => {
  const bridges = bridgesOf({ devices: DEVICES });
  assert.deepEqual(bridges.map((b) => [b.node_id, b.online, b.devices.map((d) => d.device_id)]), [
    ['phone-ada', false, ['scale']],
    ['phone-kitchen', true, ['bulb', 'hr_strap']],
  ]);
  const text = describeBridges(bridges, NOW);
  assert.match(text, /^bridge phone-ada: offline, 1 peripheral\n/);
  assert.match(text, /scale\s+Scale\s+scale\s+offline\s+-\s+kg=71\.5 \(2 d ago\)/);
  assert.match(text, /bridge phone-kitchen: online, 2 peripherals\n/);
  assert.match(text, /bulb\s+Bedside bulb\s+light\s+online\s+-\s+-\n/);
  assert.match(text, /hr_strap\s+Chest strap\s+heart_rate_monitor\s+online\s+87%\s+bpm=72 \(12 s ago\)/);
  assert.doesNotMatch(text, /thermo/);
  assert.match(describeBridges([], NOW), /no bridged peripherals; `svc bridge pair`/);
  assert.deepEqual([age('2026-11-25T03:55:00Z', NOW), age('2026-11-25T01:00:00Z', NOW), age('2026-11-25T04:00:05Z', NOW)], ['5 min ago', '3 h ago', '0 s ago']);
});

void test('svc bridge list: GET /api/devices/connected; --json groups by bridge; a refusal is exit 1', async (t) => {
  const brain = await fakeBrain(t, (s) => (s.url === '/api/devices/connected' ? [200, { devices: DEVICES }] : [404, {}]));
  const out = io();
  assert.equal(await bridgeList(brain.conn, out.io, { json: false, now: () => NOW }), 0);
  assert.match(out.text.out, /bridge phone-kitchen: online, 2 peripherals/);
  const json = io();
  assert.equal(await bridgeList(brain.conn, json.io, { json: true }), 0);
  const parsed = JSON.parse(json.text.out) as { bridges: { node_id: string; online: boolean; devices: { device_id: string }[] }[] };
  assert.deepEqual(parsed.bridges.map((b) => [b.node_id, b.online, b.devices.length]), [['phone-ada', false, 1], ['phone-kitchen', true, 2]]);
  assert.deepEqual(brain.seen.map((s) => [s.method, s.url]), [['GET', '/api/devices/connected'], ['GET', '/api/devices/connected']]);
  const refused = await fakeBrain(t, () => [404, { error: { code: 'NOT_FOUND', message: 'Route GET:/api/devices/connected not found', details: null } }]);
  const err = io();
  assert.equal(await bridgeList(refused.conn, err.io, { json: false }), 1);
  assert.match(err.text.err, /not found/);
});
