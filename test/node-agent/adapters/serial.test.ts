// The serial adapter against simulated devices on real ptys (socat; test/helpers/serial-device.ts),
// through the real `serialport` binding: telemetry arrives, actions round-trip, a set is read back,
// an unplug turns the status to connecting and fails actions at once, a replug reconnects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AdapterError, type AdapterLog, type AdapterState } from '../../../node-agent/adapters/adapter';
import { SerialAdapter, serialportOpener } from '../../../node-agent/adapters/serial';
import { parseAgentConfig, type SerialDevice } from '../../../node-agent/config';
import { plugConfig, plugSerialDevice, thermostatConfig } from '../../helpers/serial-device';

const quiet: AdapterLog = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function scratch(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-serial-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface Recorded {
  readings: { event: string; data: Record<string, unknown> }[];
  states: AdapterState[];
}

async function started(config: Record<string, unknown>): Promise<{ adapter: SerialAdapter; seen: Recorded }> {
  const device = parseAgentConfig({ devices: [config] }).devices[0] as SerialDevice;
  const adapter = new SerialAdapter(device, { open: await serialportOpener(quiet), log: quiet, retryMinMs: 50, retryMaxMs: 400 });
  const seen: Recorded = { readings: [], states: [] };
  await adapter.start({ reading: (event, data) => seen.readings.push({ event, data }), status: (state) => seen.states.push(state) });
  return { adapter, seen };
}

async function until(check: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  for (let waited = 0; !check(); waited += 25) {
    if (waited > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

const run = (adapter: SerialAdapter, action: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> => adapter.run(action, params, AbortSignal.timeout(5000));

void test('line protocol thermostat: telemetry, set and read back, refusals; unplug fails fast, replug works again', { timeout: 60_000 }, async (t) => {
  const dir = scratch(t);
  const path = join(dir, 'ttyThermo');
  const device = await plugSerialDevice({ kind: 'thermostat', path, tickMs: 50, temp: 20, stateFile: join(dir, 'state.json') });
  t.after(() => device.stop());
  const { adapter, seen } = await started(thermostatConfig(path));
  t.after(() => adapter.stop());

  await until(() => adapter.status().state === 'connected', 'connected');
  await until(() => seen.readings.length >= 2, 'telemetry');
  assert.deepEqual(seen.readings[0], { event: 'temperature', data: { celsius: 20 } });

  assert.deepEqual(await run(adapter, 'set_target', { celsius: 22.5 }), { celsius: 22.5 });
  const state = await run(adapter, 'read_state');
  assert.equal(state.target, 22.5);
  assert.equal(typeof state.celsius, 'number');
  await until(() => seen.readings.some((r) => (r.data.celsius as number) > 20.2), 'the temperature to drift toward the target');

  await assert.rejects(run(adapter, 'set_target', { celsius: 99 }), (err: Error) => err instanceof AdapterError && err.message === 'out of range 5-35');
  await assert.rejects(run(adapter, 'set_target', { celsius: '21\nSET 30' }), /may not contain control characters/);
  await assert.rejects(run(adapter, 'set_target', {}), /missing parameter celsius/);
  await assert.rejects(run(adapter, 'explode'), /thermostat has no action explode/);
  assert.equal((await run(adapter, 'read_state')).target, 22.5, 'the refused commands never reached the device');

  await device.unplug();
  await until(() => adapter.status().state === 'connecting', 'connecting after the unplug');
  assert.ok(seen.states.includes('connecting'));
  const before = performance.now();
  await assert.rejects(run(adapter, 'read_state'), /^AdapterError: device unavailable/);
  assert.ok(performance.now() - before < 1000, 'fails fast, never waits for the device');

  await device.replug();
  await until(() => adapter.status().state === 'connected', 'connected after the replug');
  assert.equal((await run(adapter, 'read_state')).target, 22.5);
  assert.deepEqual(await run(adapter, 'set_target', { celsius: 19 }), { celsius: 19 });

  await adapter.stop();
  assert.equal(adapter.status().state, 'unavailable');
  await assert.rejects(run(adapter, 'read_state'), /device unavailable/);
});

void test('JSON-lines plug: readings, replies matched by id, a refusal carries its error; an abort cancels a queued action', { timeout: 30_000 }, async (t) => {
  const dir = scratch(t);
  const path = join(dir, 'ttyPlug');
  const device = await plugSerialDevice({ kind: 'plug', path, tickMs: 50 });
  t.after(() => device.stop());
  const { adapter, seen } = await started(plugConfig(path));
  t.after(() => adapter.stop());
  await until(() => seen.readings.length >= 1, 'a power reading');
  assert.deepEqual(seen.readings[0], { event: 'power', data: { watts: 0 } });

  const [a, b] = await Promise.all([run(adapter, 'set_power', { on: true }), run(adapter, 'get_state')]);
  assert.deepEqual(a, { on: true });
  assert.deepEqual(b, { on: true, watts: 42.5 });
  await until(() => seen.readings.at(-1)?.data.watts === 42.5, 'the reading to follow the state');
  await assert.rejects(run(adapter, 'set_power', { on: 'yes' }), /unknown action set_power/);

  const controller = new AbortController();
  const first = run(adapter, 'get_state');
  const second = adapter.run('get_state', {}, controller.signal);
  controller.abort(new Error('the brain gave up'));
  await assert.rejects(second, /cancelled \(the brain gave up\)/);
  assert.deepEqual(await first, { on: true, watts: 42.5 });
});

void test('a port that does not exist: connecting with the reason, retried until stop', { timeout: 10_000 }, async (t) => {
  const dir = scratch(t);
  const { adapter, seen } = await started(thermostatConfig(join(dir, 'nothing-here')));
  t.after(() => adapter.stop());
  await sleep(300);
  assert.equal(adapter.status().state, 'connecting');
  assert.match(adapter.status().detail, /No such file or directory.*retrying in/);
  assert.deepEqual(seen.states, ['connecting']);
  await assert.rejects(run(adapter, 'read_state'), /device unavailable/);
});
