// A delivered daemon's driver in the real QuickJS sandbox (runSkill in this thread): describe() gives
// the device (transport local unless named), on_action runs each action with its params and its log
// lines reach the node's log; an action the description lacks, a driver that throws, a describe() that
// is no device, a missing entry and an entry outside the bundle are refused with their reasons; with no
// permissions.network http_get is a policy refusal, with one the egress gets exactly that policy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdapterError, type AdapterLog } from '../../node-agent/adapters/adapter';
import { checkDescription, DriverError, loadDriver, type DriverDeps } from '../../node-agent/daemon-driver';
import type { HeldDaemon } from '../../node-agent/daemon-store';
import type { NetworkPolicy } from '../../skills/egress';
import type { HttpRequest } from '../../skills/host-functions';
import { runSkill } from '../../skills/sandbox';

const PUMP_DRIVER = `
function describe() {
  log('describing');
  return { device_id: 'pump', device_type: 'relay', name: 'Garden pump', actions: [{ name: 'water', params: [{ name: 'seconds', type: 'number', required: true }] }, { name: 'fetch_weather' }, { name: 'explode' }] };
}
async function on_action(name, params) {
  if (name === 'water') { log('watering for ' + params.seconds + ' s'); return { watered_s: params.seconds }; }
  if (name === 'fetch_weather') { const r = await http_get('https://weather.example.com/now'); return { status: r.status, body: r.body }; }
  throw new Error('boom: ' + name);
}
`;

function bundle(t: { after(fn: () => void): void }, source: string, manifest: Record<string, unknown> = {}, entry = 'main.js'): HeldDaemon {
  const dir = mkdtempSync(join(tmpdir(), 'svc-driver-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'lib'));
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ node_id: 'rpi-garden', version: '1.0.0', entry, ...manifest }));
  writeFileSync(join(dir, 'main.js'), source);
  return { offer: { node_id: 'rpi-garden', version: '1.0.0', entry, display_name: 'Garden pump', sha256: 'a'.repeat(64), size: 1 }, path: dir };
}

function deps(extra: Partial<DriverDeps> = {}): DriverDeps & { lines: string[] } {
  const lines: string[] = [];
  const log: AdapterLog = { debug: () => undefined, info: (_o, msg) => void lines.push(msg), warn: () => undefined, error: () => undefined };
  return { sandbox: { run: runSkill }, log, wallMs: 3000, lines, ...extra };
}

const signal = new AbortController().signal;

void test('describe() gives the device; on_action runs its actions with their params; log lines reach the node', async (t) => {
  const d = deps();
  const driver = await loadDriver(bundle(t, PUMP_DRIVER), d);
  assert.equal(driver.manifest.device_id, 'pump');
  assert.deepEqual(driver.manifest.transport, { kind: 'local' });
  assert.deepEqual(driver.manifest.actions.map((a) => a.name), ['water', 'fetch_weather', 'explode']);
  const statuses: string[] = [];
  await driver.start({ reading: () => undefined, status: (s) => void statuses.push(s) });
  assert.deepEqual(statuses, ['connected']);
  assert.deepEqual(await driver.run('water', { seconds: 30 }, signal), { watered_s: 30 });
  assert.deepEqual(d.lines, ['driver: describing', 'driver: watering for 30 s']);
  await assert.rejects(driver.run('dance', {}, signal), (err: unknown) => err instanceof AdapterError && /has no action dance/.test(err.message));
  await assert.rejects(driver.run('explode', {}, signal), (err: unknown) => err instanceof AdapterError && /the driver failed \(error\): .*boom: explode/.test(err.message));
  await driver.stop();
  await assert.rejects(driver.run('water', { seconds: 1 }, signal), (err: unknown) => err instanceof AdapterError && err.message === 'device unavailable');
});

void test('network: none without permissions.network; with it, the egress gets exactly the manifest\'s policy', async (t) => {
  const sink = { reading: () => undefined, status: () => undefined };
  const refused = await loadDriver(bundle(t, PUMP_DRIVER), deps());
  await refused.start(sink);
  await assert.rejects(refused.run('fetch_weather', {}, signal), (err: unknown) => err instanceof AdapterError && /\(policy\).*allows no network/.test(err.message));
  const policies: NetworkPolicy[] = [];
  const egress = (policy: NetworkPolicy) => {
    policies.push(policy);
    return (request: HttpRequest) => Promise.resolve({ status: 200, headers: {}, body: `sunny at ${request.url}` });
  };
  const allowed = await loadDriver(bundle(t, PUMP_DRIVER, { permissions: { network: { allow: ['weather.example.com'] } } }), deps({ egress }));
  await allowed.start(sink);
  assert.deepEqual(await allowed.run('fetch_weather', {}, signal), { status: 200, body: 'sunny at https://weather.example.com/now' });
  assert.deepEqual(policies, [{ allow: ['weather.example.com'] }]);
});

void test('refused drivers: describe() that is no device, throws, a missing entry, an entry outside the bundle, a bad manifest', async (t) => {
  await assert.rejects(loadDriver(bundle(t, 'function describe() { return { device_id: "a b", actions: [] }; }'), deps()), (err: unknown) => err instanceof DriverError && /no valid device self-description/.test(err.message));
  await assert.rejects(loadDriver(bundle(t, 'function describe() { throw new Error("no pump found"); }'), deps()), (err: unknown) => err instanceof DriverError && /describe\(\) failed \(error\): .*no pump found/.test(err.message));
  await assert.rejects(loadDriver(bundle(t, 'x', {}, 'lib/missing.js'), deps()), (err: unknown) => err instanceof DriverError && /the entry lib\/missing\.js is missing/.test(err.message));
  await assert.rejects(loadDriver(bundle(t, 'x', {}, '../main.js'), deps()), (err: unknown) => err instanceof DriverError && /not a path inside the bundle/.test(err.message));
  await assert.rejects(loadDriver(bundle(t, PUMP_DRIVER, { permissions: { network: { allow: 'everything' } } }), deps()), (err: unknown) => err instanceof DriverError && /^manifest\.json\/permissions\/network\/allow/.test(err.message));
});

void test('checkDescription: an object with named, distinct actions; a transport it names is kept', () => {
  assert.throws(() => checkDescription([1]), DriverError);
  assert.throws(() => checkDescription({ device_id: 'p', device_type: 't', name: 'P', actions: [{}] }), /needs a name/);
  assert.throws(() => checkDescription({ device_id: 'p', device_type: 't', name: 'P', actions: [{ name: 'a' }, { id: 'a' }] }), /declared twice/);
  assert.deepEqual(checkDescription({ device_id: 'p', device_type: 't', name: 'P', transport: { kind: 'serial' }, actions: [] }).transport, { kind: 'serial' });
});
