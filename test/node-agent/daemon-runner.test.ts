// The runner with the real driver module and the in-thread sandbox: a held daemon's driver joins the
// node's devices, started with its sink, and the node registers again; a new version replaces it; a
// driver that cannot run is reported failed and takes the old device off the node; a device_id that a
// configured device already uses is refused; stop takes the driver off and closes the sandbox.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AdapterSink, DeviceAdapter } from '../../node-agent/adapters/adapter';
import * as driverModule from '../../node-agent/daemon-driver';
import { DaemonRunner } from '../../node-agent/daemon-runner';
import type { HeldDaemon } from '../../node-agent/daemon-store';
import type { SandboxPool } from '../../skills/sandbox-pool';
import { runSkill } from '../../skills/sandbox';

const driver = (deviceId: string, action: string): string =>
  `function describe() { return { device_id: '${deviceId}', device_type: 'relay', name: 'Pump', actions: [{ name: '${action}' }] }; }\nfunction on_action(name) { return { ran: name }; }\n`;

function held(t: { after(fn: () => void): void }, version: string, source: string): HeldDaemon {
  const dir = mkdtempSync(join(tmpdir(), 'svc-runner-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ node_id: 'rpi-garden', version, entry: 'main.js' }));
  writeFileSync(join(dir, 'main.js'), source);
  return { offer: { node_id: 'rpi-garden', version, entry: 'main.js', display_name: 'Garden pump', sha256: 'a'.repeat(64), size: 1 }, path: dir };
}

function rig(devices: DeviceAdapter[] = []) {
  let closed = 0;
  const sandbox = { run: runSkill, close: () => Promise.resolve(void closed++) } as unknown as SandboxPool;
  const sinks: string[] = [];
  let registers = 0;
  const sinkFor = (id: string): AdapterSink => ({ reading: () => undefined, status: (state) => void sinks.push(`${id}:${state}`) });
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const runner = new DaemonRunner({ devices, sinkFor, reregister: () => void registers++, log: quiet, load: () => Promise.resolve({ ...driverModule, driverSandbox: () => sandbox }) });
  return { runner, devices, sinks, registers: () => registers, closed: () => closed };
}

const signal = new AbortController().signal;

void test('a driver joins the devices and the node registers again; a new version replaces it; stop takes it off', async (t) => {
  const r = rig();
  assert.deepEqual(await r.runner.activate(held(t, '1.0.0', driver('pump', 'water'))), { state: 'running' });
  assert.deepEqual(r.devices.map((d) => d.manifest.device_id), ['pump']);
  assert.deepEqual(r.sinks, ['pump:connected']);
  assert.equal(r.registers(), 1);
  assert.deepEqual(await r.devices[0]!.run('water', {}, signal), { ran: 'water' });
  const first = r.devices[0]!;
  assert.deepEqual(await r.runner.activate(held(t, '1.1.0', driver('pump2', 'drain'))), { state: 'running' });
  assert.deepEqual(r.devices.map((d) => d.manifest.device_id), ['pump2']);
  assert.equal(first.status().state, 'unavailable', 'the old driver was stopped');
  assert.equal(r.registers(), 2);
  await r.runner.stop();
  assert.deepEqual(r.devices, []);
  assert.equal(r.closed(), 1);
});

void test('a driver that cannot run is failed and takes the old device off; a device_id the config uses is refused', async (t) => {
  const configured = { manifest: { device_id: 'thermostat', device_type: 't', name: 'T', actions: [] } } as unknown as DeviceAdapter;
  const r = rig([configured]);
  await r.runner.activate(held(t, '1.0.0', driver('pump', 'water')));
  const failed = await r.runner.activate(held(t, '2.0.0', 'function describe() { throw new Error("no relay board"); }'));
  assert.equal(failed.state, 'failed');
  assert.match(failed.state === 'failed' ? failed.error : '', /describe\(\) failed \(error\): .*no relay board/);
  assert.deepEqual(r.devices.map((d) => d.manifest.device_id), ['thermostat']);
  assert.equal(r.registers(), 2, 'registered again without the pump');
  const clash = await r.runner.activate(held(t, '3.0.0', driver('thermostat', 'x')));
  assert.deepEqual(clash, { state: 'failed', error: "describe(): device_id thermostat is already a device of this node's config" });
  assert.deepEqual(r.devices, [configured]);
});
