// A machine without a usable Bluetooth stack: the BLE adapter reports 'unavailable' with the reason
// and never takes the agent down. No D-Bus (DBUS_SYSTEM_BUS_ADDRESS naming a socket that does not
// exist: node-ble's own createBluetooth() would crash the process here), a D-Bus without BlueZ, and a
// machine off Linux without @abandonware/noble.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AdapterState } from '../../../node-agent/adapters/adapter';
import { BleAdapter, bleSessionsFor } from '../../../node-agent/adapters/ble';
import { NOBLE_MISSING, nobleSessions } from '../../../node-agent/adapters/ble-noble';
import { BleUnavailable, type OpenBleSession } from '../../../node-agent/adapters/ble-transport';
import type { BleDevice } from '../../../node-agent/config';
import { parseAgentConfig } from '../../../node-agent/config';
import { privateBusMissing, startPrivateBus } from '../../helpers/fake-bluez-bus';

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const device = (): BleDevice =>
  parseAgentConfig({
    devices: [
      {
        adapter: 'ble',
        id: 'thermo',
        name: 'Thermometer',
        type: 'thermometer',
        local_name: 'Thermo-7',
        actions: [{ name: 'read_temperature', category: 'sensor' }],
        characteristics: [{ service: '181a', characteristic: '2a6e', format: 'int16le', scale: 0.01, reading: 'temperature', read_action: 'read_temperature' }],
      },
    ],
  }).devices[0] as BleDevice;

/** Starts an adapter on `open` and resolves with its first 'unavailable' status detail. */
async function firstUnavailable(open: OpenBleSession, t: { after(fn: () => Promise<void>): void }): Promise<{ adapter: BleAdapter; detail: string; states: AdapterState[] }> {
  const adapter = new BleAdapter(device(), { open, log: quiet, retryMinMs: 10, retryMaxMs: 50 });
  t.after(() => adapter.stop());
  const states: AdapterState[] = [];
  const detail = await new Promise<string>((resolve) => {
    void adapter.start({
      reading: () => assert.fail('no reading without a stack'),
      status: (state, d) => {
        states.push(state);
        if (state === 'unavailable') resolve(d);
      },
    });
  });
  return { adapter, detail, states };
}

const crashes: unknown[] = [];
process.on('uncaughtException', (err) => crashes.push(err));

void test('no D-Bus at DBUS_SYSTEM_BUS_ADDRESS: unavailable with the reason, actions fail, no crash', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ble-nobus-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const socket = join(dir, 'no-such-bus.sock');
  // dbus-next's systemBus() (which node-ble uses) reads this variable when a session opens.
  process.env.DBUS_SYSTEM_BUS_ADDRESS = `unix:path=${socket}`;
  const { adapter, detail } = await firstUnavailable(bleSessionsFor('linux', { log: quiet }), t);
  assert.ok(detail.startsWith(`no D-Bus system bus (connect ENOENT ${socket}); BLE needs BlueZ over D-Bus; retrying in `), detail);
  await assert.rejects(adapter.run('read_temperature', {}, new AbortController().signal), { name: 'AdapterError', message: 'device unavailable' });
  await adapter.stop();
  assert.deepEqual(adapter.status(), { state: 'unavailable', detail: 'stopped' });
  assert.deepEqual(crashes, []);
});

void test('a bus address that is not one: unavailable, not a throw', async (t) => {
  const open = bleSessionsFor('linux', { log: quiet, busAddress: 'nonsense' });
  await assert.rejects(open(), (err: unknown) => err instanceof BleUnavailable && /^no D-Bus system bus \(.+\); BLE needs BlueZ over D-Bus$/.test(err.message) && !err.permanent);
  const { detail } = await firstUnavailable(open, t);
  assert.match(detail, /^no D-Bus system bus/);
});

void test('D-Bus without BlueZ: unavailable "BlueZ is not running"', { skip: privateBusMissing() ?? false }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ble-nobluez-'));
  const bus = await startPrivateBus(dir);
  t.after(async () => {
    await bus.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const { adapter, detail } = await firstUnavailable(bleSessionsFor('linux', { log: quiet, busAddress: bus.address }), t);
  assert.match(detail, /^BlueZ is not running \(no org\.bluez on the system bus\); retrying in/);
  await adapter.stop();
  assert.deepEqual(crashes, []);
});

void test('off Linux without @abandonware/noble: unavailable for good, the import tried once', async (t) => {
  let imports = 0;
  const open = nobleSessions({
    log: quiet,
    importer: (name) => {
      imports++;
      return import(name) as Promise<unknown>;
    },
  });
  const { adapter, detail, states } = await firstUnavailable(open, t);
  assert.equal(detail, NOBLE_MISSING);
  assert.equal(detail, 'BLE needs BlueZ on Linux or @abandonware/noble');
  await adapter.stop();
  assert.equal(imports, 1, 'no retries: installing noble needs a restart anyway');
  assert.deepEqual(states, ['unavailable', 'unavailable']);
  // The platform switch picks noble off Linux.
  await assert.rejects(bleSessionsFor('darwin', { log: quiet })(), (err: unknown) => err instanceof BleUnavailable && err.permanent && err.message === NOBLE_MISSING);
});
