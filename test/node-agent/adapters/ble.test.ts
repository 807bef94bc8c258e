// The BLE adapter against BlueZ's D-Bus interfaces on a private bus: node-ble talks to a fake
// bluetoothd (test/helpers/fake-bluez.ts) through a real dbus-daemon. The simulated peripheral is a
// thermometer: temperature notifies int16le centi-degrees, the LED is a writable uint8 register.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dbus from 'dbus-next';
import { parseAgentConfig, type BleDevice } from '../../../node-agent/config';
import type { AdapterState } from '../../../node-agent/adapters/adapter';
import { BleAdapter } from '../../../node-agent/adapters/ble';
import { bluezSessions } from '../../../node-agent/adapters/ble-bluez';
import { privateBusMissing, startPrivateBus, type PrivateBus } from '../../helpers/fake-bluez-bus';
import { centi, LED, LED_SERVICE, startFakeBluez, TEMPERATURE, THERMO_ADDRESS, thermometer, type FakeBluez, type FakePeripheralSpec } from '../../helpers/fake-bluez';

const missing = privateBusMissing();
if (missing) console.log(`# BLE adapter tests skipped: ${missing}`);

const ADDRESS = THERMO_ADDRESS;

const deviceConfig = (over: Record<string, unknown> = {}): BleDevice => {
  const config = parseAgentConfig({
    devices: [
      {
        adapter: 'ble',
        id: 'thermo',
        name: 'Hall thermometer',
        type: 'thermometer',
        address: ADDRESS,
        capabilities: ['temperature', 'led'],
        actions: [
          { name: 'read_temperature', category: 'sensor', description: 'Current temperature' },
          { name: 'read_led', category: 'sensor' },
          { name: 'set_led', category: 'actuator', params: [{ name: 'on', type: 'boolean', required: true }], verify: { via: 'read_led', field: 'on', expect: '$on' } },
        ],
        characteristics: [
          { service: '181a', characteristic: '2A6E', format: 'int16le', scale: 0.01, reading: 'temperature', field: 'celsius', read_action: 'read_temperature' },
          { service: LED_SERVICE, characteristic: LED, format: 'uint8', field: 'on', read_action: 'read_led', write_action: 'set_led', param: 'on' },
        ],
        ...over,
      },
    ],
  });
  return config.devices[0] as BleDevice;
};

/** What the adapter told its sink, with a way to wait for the next matching report. */
class Recorder {
  readonly readings: Array<{ eventType: string; data: Record<string, unknown> }> = [];
  readonly states: Array<{ state: AdapterState; detail: string }> = [];
  private waiters: Array<() => void> = [];
  reading(eventType: string, data: Record<string, unknown>): void {
    this.readings.push({ eventType, data });
    this.poke();
  }
  status(state: AdapterState, detail: string): void {
    this.states.push({ state, detail });
    this.poke();
  }
  private poke(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  /** Resolves once `check` holds (checked on every report); rejects after 15 s with what arrived. */
  until(what: string, check: () => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`never: ${what}; states ${JSON.stringify(this.states)}; readings ${JSON.stringify(this.readings)}`)), 15_000);
      const again = (): void => {
        if (check()) {
          clearTimeout(timer);
          resolve();
        } else this.waiters.push(again);
      };
      again();
    });
  }
  state(): AdapterState | undefined {
    return this.states.at(-1)?.state;
  }
}

const quiet = process.env.BLE_TEST_LOG
  ? { debug: (o: object, m: string) => console.log('debug', m, o), info: (o: object, m: string) => console.log('info', m, o), warn: (o: object, m: string) => console.log('warn', m, o), error: (o: object, m: string) => console.log('error', m, o) }
  : { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

interface Rig {
  bus: PrivateBus;
  bluez: FakeBluez;
  /** Runs at the end of the test, last added first (the adapter stops before its bus goes). */
  cleanup: (fn: () => Promise<void>) => void;
}

async function rig(t: TestContext, peripherals: FakePeripheralSpec[] = [thermometer()]): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ble-'));
  const bus = await startPrivateBus(dir);
  const bluez = await startFakeBluez(bus.address, peripherals);
  const cleanups: Array<() => Promise<void>> = [() => bus.close(), () => bluez.close()];
  t.after(async () => {
    for (const fn of cleanups.reverse()) await fn();
    rmSync(dir, { recursive: true, force: true });
  });
  return { bus, bluez, cleanup: (fn) => cleanups.push(fn) };
}

function adapterOn({ bus, cleanup }: Rig, device: BleDevice = deviceConfig(), scanTimeoutMs = 5000): { adapter: BleAdapter; sink: Recorder } {
  const adapter = new BleAdapter(device, {
    open: bluezSessions({ log: quiet, busAddress: bus.address, scanPollMs: 20, callTimeoutMs: 5000 }),
    log: quiet,
    scanTimeoutMs,
    retryMinMs: 20,
    retryMaxMs: 200,
  });
  const sink = new Recorder();
  cleanup(() => adapter.stop());
  return { adapter, sink };
}

const never = new AbortController().signal;

void test('the manifest says what the config declares, over transport ble', () => {
  const adapter = new BleAdapter(deviceConfig(), { open: () => Promise.reject(new Error('not opened')), log: quiet });
  assert.equal(adapter.manifest.device_id, 'thermo');
  assert.deepEqual(adapter.manifest.transport, { kind: 'ble', address: ADDRESS });
  assert.deepEqual(adapter.manifest.actions.map((a) => a.name), ['read_temperature', 'read_led', 'set_led']);
  assert.equal(adapter.status().state, 'connecting');
});

void test('scans, connects, reads the temperature at once and on every notification, decoded to degrees', { skip: missing ?? false }, async (t) => {
  const r = await rig(t);
  const { bluez } = r;
  const { adapter, sink } = adapterOn(r);
  await adapter.start(sink);
  await sink.until('connected', () => sink.state() === 'connected');
  assert.match(adapter.status().detail, /connected to C4:7C:8D:6A:12:F0 \(Thermo-7\)/);
  assert.deepEqual(sink.readings[0], { eventType: 'temperature', data: { celsius: 21.5 } });
  assert.ok(bluez.calls.includes('Adapter1.StartDiscovery') && bluez.calls.includes('Adapter1.StopDiscovery'), 'discovery ran and stopped');
  assert.ok(bluez.calls.includes('GattCharacteristic1.StartNotify'));

  bluez.notify(ADDRESS, TEMPERATURE, centi(-3.25));
  bluez.notify(ADDRESS, TEMPERATURE, centi(22.07));
  await sink.until('two notifications', () => sink.readings.length >= 3);
  assert.deepEqual(sink.readings.slice(1).map((r) => r.data.celsius), [-3.25, 22.07]);
  assert.deepEqual(await adapter.run('read_temperature', {}, never), { celsius: 22.07 });

  // The fake's ObjectManager lists what a BlueZ client sees: the adapter, the device, its GATT tree.
  const client = dbus.sessionBus({ busAddress: r.bus.address });
  r.cleanup(async () => client.disconnect());
  const root = await client.getProxyObject('org.bluez', '/');
  const manager = root.getInterface('org.freedesktop.DBus.ObjectManager') as unknown as { GetManagedObjects(): Promise<Record<string, Record<string, Record<string, { value: unknown }>>>> };
  const objects = await manager.GetManagedObjects();
  const device = objects['/org/bluez/hci0/dev_C4_7C_8D_6A_12_F0']?.['org.bluez.Device1'];
  assert.equal(device?.Connected?.value, true);
  const characteristics = Object.values(objects).flatMap((o) => (o['org.bluez.GattCharacteristic1'] ? [o['org.bluez.GattCharacteristic1'].UUID?.value] : []));
  assert.deepEqual(characteristics.sort(), [TEMPERATURE, LED].sort());
});

void test('services resolved right after BlueZ answered a read of ServicesResolved still connect', { skip: missing ?? false }, async (t) => {
  const r = await rig(t, [{ ...thermometer(), resolveServices: 'right-after-a-read' }]);
  const { adapter, sink } = adapterOn(r);
  await adapter.start(sink);
  await sink.until('connected', () => sink.state() === 'connected');
  assert.deepEqual(sink.readings[0], { eventType: 'temperature', data: { celsius: 21.5 } });
});

void test('an action writes the characteristic, and the verify read-back sees the value', { skip: missing ?? false }, async (t) => {
  const r = await rig(t);
  const { bluez } = r;
  const { adapter, sink } = adapterOn(r);
  await adapter.start(sink);
  await sink.until('connected', () => sink.state() === 'connected');

  assert.deepEqual(await adapter.run('set_led', { on: true }, never), { on: true, written: '01' });
  assert.deepEqual(bluez.writes(ADDRESS, LED), [Buffer.from([1])]);
  // The brain verifies set_led by running its verify.via action and comparing the field.
  const verify = adapter.manifest.actions.find((a) => a.name === 'set_led')?.verify;
  assert.equal(verify?.via, 'read_led');
  assert.deepEqual(await adapter.run(verify.via, {}, never), { on: 1 });

  await adapter.run('set_led', { on: false }, never);
  assert.deepEqual(bluez.writes(ADDRESS, LED), [Buffer.from([1]), Buffer.from([0])]);
  await assert.rejects(adapter.run('set_led', { on: 'bright' }, never), /set_led: on uint8 needs a number, got string/);
  await assert.rejects(adapter.run('set_led', {}, never), /set_led: missing parameter on/);
  await assert.rejects(adapter.run('dance', {}, never), /thermo has no action dance/);
  assert.equal(bluez.writes(ADDRESS, LED).length, 2, 'refused actions write nothing');
});

void test('an action in flight fails when the link drops, when its signal aborts, and when the adapter stops', { skip: missing ?? false }, async (t) => {
  const r = await rig(t);
  const { adapter, sink } = adapterOn(r);
  await adapter.start(sink);
  await sink.until('connected', () => sink.state() === 'connected');
  const release = r.bluez.holdWrites(ADDRESS, LED);
  r.cleanup(async () => release());

  const aborter = new AbortController();
  const aborted = adapter.run('set_led', { on: true }, aborter.signal);
  aborter.abort();
  await assert.rejects(aborted, { name: 'AdapterError', message: 'set_led: aborted' });

  const dropped = adapter.run('set_led', { on: true }, never);
  r.bluez.dropConnection(ADDRESS);
  await assert.rejects(dropped, { name: 'AdapterError', message: `set_led: device unavailable (${ADDRESS} disconnected)` });

  await sink.until('connected again', () => sink.state() === 'connected');
  const stopped = assert.rejects(adapter.run('set_led', { on: true }, never), { name: 'AdapterError', message: 'set_led: the node-agent is stopping' });
  await adapter.stop();
  await stopped;
  assert.deepEqual(r.bluez.writes(ADDRESS, LED), [], 'no held write went through');
});

void test('finds the peripheral by its local name among others', { skip: missing ?? false }, async (t) => {
  const r = await rig(t, [thermometer('11:22:33:44:55:66', 'Other'), thermometer()]);
  const { adapter, sink } = adapterOn(r, deviceConfig({ address: undefined, local_name: 'Thermo-7' }));
  await adapter.start(sink);
  await sink.until('connected', () => sink.state() === 'connected');
  assert.match(adapter.status().detail, /C4:7C:8D:6A:12:F0/);
});

void test('two devices scan at once, each with its own discovery session, and both connect', { skip: missing ?? false }, async (t) => {
  const SECOND = '11:22:33:44:55:66';
  // The second thermometer advertises later than the first is found: a scan that leaned on the
  // first one's discovery would stop with it and never find the second.
  const r = await rig(t, [thermometer(ADDRESS, 'Thermo-7', 100), thermometer(SECOND, 'Thermo-8', 300)]);
  const first = adapterOn(r);
  const second = adapterOn(r, deviceConfig({ id: 'thermo_b', address: SECOND }));
  await first.adapter.start(first.sink);
  for (let i = 0; i < 2000 && !r.bluez.calls.includes('Adapter1.StartDiscovery'); i++) await new Promise((res) => setTimeout(res, 5));
  await second.adapter.start(second.sink);
  await first.sink.until('first connected', () => first.sink.state() === 'connected');
  await second.sink.until('second connected', () => second.sink.state() === 'connected');
  assert.match(second.adapter.status().detail, /11:22:33:44:55:66 \(Thermo-8\)/);
  r.bluez.notify(SECOND, TEMPERATURE, centi(30));
  await second.sink.until('the second one\'s reading', () => second.sink.readings.some((x) => x.data.celsius === 30));
  assert.ok(first.sink.readings.every((x) => x.data.celsius !== 30), 'each adapter hears its own device');
  assert.ok(second.sink.states.every((x) => !/not found/.test(x.detail)), JSON.stringify(second.sink.states));
  assert.ok(r.bluez.calls.filter((c) => c === 'Adapter1.StartDiscovery').length >= 2);
});

void test('a dropped link: status connecting, actions fail fast, then it reconnects and readings flow again', { skip: missing ?? false }, async (t) => {
  const r = await rig(t);
  const { bluez } = r;
  const { adapter, sink } = adapterOn(r);
  await adapter.start(sink);
  await sink.until('connected', () => sink.state() === 'connected');

  bluez.setInRange(ADDRESS, false);
  bluez.dropConnection(ADDRESS);
  await sink.until('connecting after the drop', () => sink.state() === 'connecting');
  await assert.rejects(adapter.run('set_led', { on: true }, never), { name: 'AdapterError', message: 'device unavailable' });
  await sink.until('a failed attempt while out of range', () => sink.states.some((s) => /le-connection-abort-by-local; retrying in/.test(s.detail)));
  assert.equal(bluez.connects(ADDRESS), 1);

  bluez.setInRange(ADDRESS, true);
  const before = sink.readings.length;
  await sink.until('connected again', () => sink.state() === 'connected');
  assert.equal(bluez.connects(ADDRESS), 2);
  bluez.notify(ADDRESS, TEMPERATURE, centi(19));
  await sink.until('a reading after the reconnect', () => sink.readings.slice(before).some((r) => r.data.celsius === 19));
  assert.deepEqual(await adapter.run('set_led', { on: true }, never), { on: true, written: '01' });
});

void test('bluetoothd leaving the bus: unavailable with the reason, back when it returns', { skip: missing ?? false }, async (t) => {
  const r = await rig(t);
  const { bluez } = r;
  const { adapter, sink } = adapterOn(r);
  await adapter.start(sink);
  await sink.until('connected', () => sink.state() === 'connected');
  await bluez.close();
  await sink.until('unavailable without BlueZ', () => sink.state() === 'unavailable');
  assert.match(adapter.status().detail, /BlueZ is not running \(no org\.bluez on the system bus\); retrying in/);
  await assert.rejects(adapter.run('read_temperature', {}, never), /device unavailable/);

  const again = await startFakeBluez(r.bus.address, [thermometer()]);
  r.cleanup(() => again.close());
  await sink.until('connected to the new bluetoothd', () => sink.state() === 'connected');
  assert.deepEqual(await adapter.run('read_temperature', {}, never), { celsius: 21.5 });
});

void test('the D-Bus daemon dying under a connection: unavailable with the reason, no crash', { skip: missing ?? false }, async (t) => {
  const crashes: unknown[] = [];
  const onCrash = (err: unknown): void => void crashes.push(err);
  process.on('uncaughtException', onCrash);
  t.after(() => process.off('uncaughtException', onCrash));
  const r = await rig(t);
  const { adapter, sink } = adapterOn(r);
  await adapter.start(sink);
  await sink.until('connected', () => sink.state() === 'connected');
  await r.bus.close();
  await sink.until('unavailable without a bus', () => sink.state() === 'unavailable' && /^no D-Bus system bus \(connect (ENOENT|ECONNREFUSED) /.test(adapter.status().detail));
  await assert.rejects(adapter.run('read_temperature', {}, never), /device unavailable/);
  await adapter.stop();
  assert.deepEqual(crashes, []);
});

void test('stop() disconnects the device, ends the retries and is idempotent', { skip: missing ?? false }, async (t) => {
  const r = await rig(t);
  const { bluez } = r;
  const { adapter, sink } = adapterOn(r);
  await adapter.start(sink);
  await sink.until('connected', () => sink.state() === 'connected');
  await adapter.stop();
  assert.ok(bluez.calls.includes('Device1.Disconnect'));
  assert.deepEqual(adapter.status(), { state: 'unavailable', detail: 'stopped' });
  await adapter.stop();
  await assert.rejects(adapter.run('set_led', { on: true }, never), /device unavailable/);
});

void test('a device that never shows up: connecting with the scan result, and stop() ends the scan', { skip: missing ?? false }, async (t) => {
  const r = await rig(t);
  const { bluez } = r;
  const { adapter, sink } = adapterOn(r, deviceConfig({ address: '00:00:00:00:00:01' }), 300);
  await adapter.start(sink);
  await sink.until('a scan that found nothing', () => sink.states.some((s) => /^00:00:00:00:00:01 not found in 0\.3 s of scanning; retrying in/.test(s.detail)));
  assert.ok(sink.states.every((s) => s.state === 'connecting'), JSON.stringify(sink.states));
  await sink.until('scanning again', () => sink.states.at(-1)!.detail.startsWith('scanning for 00:00:00:00:00:01'));
  await adapter.stop();
  assert.equal(adapter.status().state, 'unavailable');
  assert.equal(bluez.calls.filter((c) => c === 'Adapter1.StartDiscovery').length, bluez.calls.filter((c) => c === 'Adapter1.StopDiscovery').length, 'every scan was stopped');
});
