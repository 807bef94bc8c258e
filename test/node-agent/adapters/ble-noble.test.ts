// The noble path (BLE off Linux). @abandonware/noble is not installed here and cannot run without a
// radio, so these tests give nobleSessions a scripted stand-in for the module through its importer
// seam: an object with noble's events and async methods, driving the same BleAdapter as BlueZ does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { AdapterState } from '../../../node-agent/adapters/adapter';
import { BleAdapter } from '../../../node-agent/adapters/ble';
import { nobleSessions, nobleUuid } from '../../../node-agent/adapters/ble-noble';
import { parseAgentConfig, type BleDevice } from '../../../node-agent/config';

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

class ScriptedCharacteristic extends EventEmitter {
  readonly writes: Array<{ data: Buffer; withoutResponse: boolean }> = [];
  subscribed = false;
  constructor(
    readonly _serviceUuid: string,
    readonly uuid: string,
    readonly properties: string[],
    public value: Buffer,
  ) {
    super();
  }
  async readAsync(): Promise<Buffer> {
    return this.value;
  }
  async writeAsync(data: Buffer, withoutResponse: boolean): Promise<void> {
    this.writes.push({ data, withoutResponse });
  }
  async subscribeAsync(): Promise<void> {
    this.subscribed = true;
  }
  notify(value: Buffer): void {
    this.value = value;
    if (this.subscribed) this.emit('data', value, true);
  }
}

/** A macOS-like peripheral: noble knows it by id, with no address. */
class ScriptedPeripheral extends EventEmitter {
  readonly address = '';
  connects = 0;
  constructor(
    readonly id: string,
    readonly advertisement: { localName?: string },
    readonly characteristics: ScriptedCharacteristic[],
  ) {
    super();
  }
  async connectAsync(): Promise<void> {
    this.connects++;
  }
  async disconnectAsync(): Promise<void> {
    this.emit('disconnect');
  }
  async discoverSomeServicesAndCharacteristicsAsync(): Promise<{ services: Array<{ uuid: string }>; characteristics: ScriptedCharacteristic[] }> {
    for (const c of this.characteristics) c.subscribed = false;
    return { services: [...new Set(this.characteristics.map((c) => c._serviceUuid))].map((uuid) => ({ uuid })), characteristics: this.characteristics };
  }
}

class ScriptedNoble extends EventEmitter {
  state = 'poweredOn';
  scans = 0;
  constructor(readonly peripherals: ScriptedPeripheral[]) {
    super();
  }
  async startScanningAsync(): Promise<void> {
    this.scans++;
    setImmediate(() => {
      for (const p of this.peripherals) this.emit('discover', p);
    });
  }
  async stopScanningAsync(): Promise<void> {}
}

const device = (): BleDevice =>
  parseAgentConfig({
    devices: [
      {
        adapter: 'ble',
        id: 'thermo',
        name: 'Thermometer',
        type: 'thermometer',
        local_name: 'Thermo-7',
        actions: [{ name: 'set_led', params: [{ name: 'on', type: 'boolean' }] }],
        characteristics: [
          { service: '181a', characteristic: '2a6e', format: 'int16le', scale: 0.01, reading: 'temperature', field: 'celsius' },
          { service: '6e400001-b5a3-f393-e0a9-e50e24dcca9e', characteristic: '6e400002-b5a3-f393-e0a9-e50e24dcca9e', format: 'uint8', write_action: 'set_led', param: 'on', write_without_response: true },
        ],
      },
    ],
  }).devices[0] as BleDevice;

void test('noble names UUIDs without dashes, the Bluetooth base ones by their 16 bits', () => {
  assert.equal(nobleUuid('00002a6e-0000-1000-8000-00805f9b34fb'), '2a6e');
  assert.equal(nobleUuid('6e400002-b5a3-f393-e0a9-e50e24dcca9e'), '6e400002b5a3f393e0a9e50e24dcca9e');
});

void test('through noble: found by local name, readings decoded, writes without response, reconnect after a drop', async (t) => {
  const temperature = new ScriptedCharacteristic('181a', '2a6e', ['read', 'notify'], Buffer.from([0x66, 0x08]));
  const led = new ScriptedCharacteristic('6e400001b5a3f393e0a9e50e24dcca9e', '6e400002b5a3f393e0a9e50e24dcca9e', ['read', 'writeWithoutResponse'], Buffer.from([0]));
  const other = new ScriptedPeripheral('other', { localName: 'Other' }, []);
  const thermo = new ScriptedPeripheral('5c2f1a', { localName: 'Thermo-7' }, [temperature, led]);
  const noble = new ScriptedNoble([other, thermo]);
  const adapter = new BleAdapter(device(), { open: nobleSessions({ log: quiet, importer: async () => ({ default: noble }) }), log: quiet, retryMinMs: 10, retryMaxMs: 50 });
  t.after(() => adapter.stop());
  const readings: unknown[] = [];
  const states: AdapterState[] = [];
  let poke = (): void => undefined;
  const until = (check: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      poke = () => check() && resolve();
      poke();
    });
  await adapter.start({
    reading: (eventType, data) => {
      readings.push({ eventType, data });
      poke();
    },
    status: (state) => {
      states.push(state);
      poke();
    },
  });
  await until(() => states.at(-1) === 'connected');
  assert.match(adapter.status().detail, /^connected to 5c2f1a \(Thermo-7\)$/);
  assert.deepEqual(readings, [{ eventType: 'temperature', data: { celsius: 21.5 } }]);
  temperature.notify(Buffer.from([0xbb, 0xfe]));
  assert.deepEqual(readings.at(-1), { eventType: 'temperature', data: { celsius: -3.25 } });

  assert.deepEqual(await adapter.run('set_led', { on: true }, new AbortController().signal), { on: true, written: '01' });
  assert.deepEqual(led.writes, [{ data: Buffer.from([1]), withoutResponse: true }]);

  thermo.emit('disconnect');
  await until(() => states.at(-1) === 'connecting');
  await until(() => states.at(-1) === 'connected');
  assert.equal(thermo.connects, 2);
  assert.equal(other.connects, 0);
  await adapter.stop();
  assert.equal(adapter.status().state, 'unavailable');
});

void test('a radio that is not powered on: unavailable with its state, retried', async (t) => {
  const noble = new ScriptedNoble([]);
  noble.state = 'poweredOff';
  const adapter = new BleAdapter(device(), { open: nobleSessions({ log: quiet, importer: async () => noble, powerOnTimeoutMs: 20 }), log: quiet, retryMinMs: 10, retryMaxMs: 50 });
  t.after(() => adapter.stop());
  const details: string[] = [];
  await new Promise<void>((resolve) => {
    void adapter.start({
      reading: () => undefined,
      status: (state, detail) => {
        details.push(detail);
        if (state === 'unavailable' && details.length >= 2) resolve();
      },
    });
  });
  assert.match(details[0]!, /^Bluetooth is poweredOff \(noble\); retrying in/);
  noble.state = 'poweredOn';
  noble.emit('stateChange', 'poweredOn');
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (adapter.status().detail.startsWith('scanning for "Thermo-7"') || /not found/.test(adapter.status().detail)) {
        clearInterval(check);
        resolve();
      }
    }, 5);
  });
});
