// applyEnvironment overlays every environment variable the spec names onto validated settings; CLI
// flags win over both. Spec 4.12 pins the two metrics switches exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { applyEnvironment, clockOffset, envFlag, EnvironmentError, ENVIRONMENT_VARIABLES, resolveHome } from '../../../daemon/config/environment';
import { parseSettings } from '../../../daemon/config/load-settings';
import { UNSUPPORTED_VARIABLES } from '../../../daemon/config/unsupported-settings';
import type { Settings } from '../../../daemon/config/settings-schema';

const defaults = parseSettings({});
const apply = (env: Record<string, string>, base: Settings = defaults, flags: { host?: string; port?: number } = {}): Settings => applyEnvironment(base, env, flags);

test('with no variables the settings are unchanged, frozen, and the input is never mutated', () => {
  const out = apply({});
  assert.deepEqual(out, defaults);
  assert.ok(Object.isFrozen(out));
  const base = parseSettings({ server: { port: 1234 } });
  apply({ SVC_PORT: '4321' }, base);
  assert.equal(base.server.port, 1234);
});

test('SVC_HOST and SVC_PORT override settings.json; --host and --port override both', () => {
  const base = parseSettings({ server: { host: '0.0.0.0', port: 1000 } });
  assert.deepEqual(apply({ SVC_HOST: '::1', SVC_PORT: '2000' }, base).server, { ...base.server, host: '::1', port: 2000 });
  assert.deepEqual(apply({ SVC_HOST: '::1', SVC_PORT: '2000' }, base, { host: '127.0.0.1', port: 0 }).server, { ...base.server, host: '127.0.0.1', port: 0 });
  assert.equal(apply({ SVC_PORT: ' 8080 ' }).server.port, 8080);
  assert.equal(apply({ SVC_PORT: '' }).server.port, defaults.server.port);
});

test('a bad SVC_PORT is an EnvironmentError naming the variable and its value', () => {
  for (const value of ['abc', '-1', '65536', '80.5', '0x1F', '1e3', '８０']) {
    assert.throws(
      () => apply({ SVC_PORT: value }),
      (err: unknown) => err instanceof EnvironmentError && err.message === `SVC_PORT=${value}: expected a port number 0-65535`,
      value,
    );
  }
});

test('SVC_LOG_LEVEL takes a pino level, anything else is an error', () => {
  assert.equal(apply({ SVC_LOG_LEVEL: 'debug' }).log.level, 'debug');
  assert.throws(() => apply({ SVC_LOG_LEVEL: 'loud' }), /SVC_LOG_LEVEL=loud: expected one of fatal, error/);
});

test('SVC_METRICS_ENDPOINT: 0, false and off (any case) silence metrics; anything else keeps them on', () => {
  for (const off of ['0', 'false', 'off', 'OFF', ' False ']) assert.equal(apply({ SVC_METRICS_ENDPOINT: off }).metrics.endpoint, false, off);
  for (const on of ['1', 'true', 'on', 'yes']) assert.equal(apply({ SVC_METRICS_ENDPOINT: on }).metrics.endpoint, true, on);
  const fileOff = parseSettings({ metrics: { endpoint: false } });
  assert.equal(apply({}, fileOff).metrics.endpoint, false, 'unset keeps settings.json');
  assert.equal(apply({ SVC_METRICS_ENDPOINT: '' }, fileOff).metrics.endpoint, false, 'empty keeps settings.json');
  assert.equal(apply({ SVC_METRICS_ENDPOINT: '1' }, fileOff).metrics.endpoint, true);
});

test('SVC_METRICS_PUBLIC is on only when exactly 1', () => {
  assert.equal(apply({ SVC_METRICS_PUBLIC: '1' }).metrics.public, true);
  assert.equal(apply({ SVC_METRICS_PUBLIC: ' 1 ' }).metrics.public, true);
  for (const value of ['true', 'yes', 'on', '2', '01', '']) assert.equal(apply({ SVC_METRICS_PUBLIC: value }).metrics.public, false, value);
  const filePublic = parseSettings({ metrics: { public: true } });
  assert.equal(apply({}, filePublic).metrics.public, true);
  assert.equal(apply({ SVC_METRICS_PUBLIC: '0' }, filePublic).metrics.public, false);
});

test('SVC_SYNC_DISABLED=1 (exactly) turns off mesh.advertise_sync and keeps the rest of the mesh section', () => {
  const mesh = (settings: Settings): unknown => (settings as Settings & Record<string, unknown>).mesh;
  assert.deepEqual(mesh(apply({ SVC_SYNC_DISABLED: '1' })), { advertise_sync: false });
  assert.deepEqual(mesh(apply({ SVC_SYNC_DISABLED: ' 1 ' })), { advertise_sync: false });
  const withMesh = { ...defaults, mesh: { advertise: false, advertise_sync: true } } as Settings;
  assert.deepEqual(mesh(apply({ SVC_SYNC_DISABLED: '1' }, withMesh)), { advertise: false, advertise_sync: false });
  for (const value of ['0', 'true', 'yes', '', ' ']) assert.deepEqual(mesh(apply({ SVC_SYNC_DISABLED: value }, withMesh)), { advertise: false, advertise_sync: true }, value);
  assert.equal(mesh(apply({ SVC_SYNC_DISABLED: '0' })), undefined);
  assert.ok(!('SVC_SYNC_DISABLED' in UNSUPPORTED_VARIABLES), 'no longer refused: it has an effect');
});

test('SVC_SYNC_DISABLED=1 also turns sync off (sync.enabled false) and keeps the static peers', () => {
  const sync = (settings: Settings): unknown => (settings as Settings & Record<string, unknown>).sync;
  assert.deepEqual(sync(apply({ SVC_SYNC_DISABLED: '1' })), { enabled: false });
  const peers = [{ url: 'ws://cabin.local:9090/sync', brain_id: '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f' }];
  const withSync = { ...defaults, sync: { enabled: true, peers } } as Settings;
  assert.deepEqual(sync(apply({ SVC_SYNC_DISABLED: '1' }, withSync)), { enabled: false, peers });
  for (const value of ['0', 'yes', '']) assert.deepEqual(sync(apply({ SVC_SYNC_DISABLED: value }, withSync)), { enabled: true, peers }, value);
});

test('SVC_CLOCK_OFFSET_MS: an integer of milliseconds, 0 when unset or empty; anything else is refused', () => {
  assert.equal(clockOffset({}), 0);
  assert.equal(clockOffset({ SVC_CLOCK_OFFSET_MS: '' }), 0);
  assert.equal(clockOffset({ SVC_CLOCK_OFFSET_MS: '3600000' }), 3_600_000);
  assert.equal(clockOffset({ SVC_CLOCK_OFFSET_MS: ' -3600000 ' }), -3_600_000);
  for (const bad of ['1h', '1.5', '1e6', '0x10', '9999999999999']) assert.throws(() => clockOffset({ SVC_CLOCK_OFFSET_MS: bad }), EnvironmentError, bad);
});

test('SVC_GENERIC_HARDWARE_SKILLS sets hardware.generic_tools: 0 off, 1 on, anything else refused by name', () => {
  const hardware = (settings: Settings): unknown => (settings as Settings & Record<string, unknown>).hardware;
  assert.deepEqual(hardware(apply({ SVC_GENERIC_HARDWARE_SKILLS: '0' })), { generic_tools: false });
  assert.deepEqual(hardware(apply({ SVC_GENERIC_HARDWARE_SKILLS: ' 1 ' })), { generic_tools: true });
  const withHardware = { ...defaults, hardware: { heartbeat_ms: 5000, generic_tools: true } } as Settings;
  assert.deepEqual(hardware(apply({ SVC_GENERIC_HARDWARE_SKILLS: '0' }, withHardware)), { heartbeat_ms: 5000, generic_tools: false });
  assert.equal(hardware(apply({})), undefined);
  assert.equal(hardware(apply({ SVC_GENERIC_HARDWARE_SKILLS: ' ' })), undefined, 'empty counts as unset');
  for (const value of ['false', 'no', '2', 'off']) {
    assert.throws(() => apply({ SVC_GENERIC_HARDWARE_SKILLS: value }), (err: unknown) => err instanceof EnvironmentError && err.message.startsWith('SVC_GENERIC_HARDWARE_SKILLS='), value);
  }
});

test('variables of features this version does not have are refused, each named with what is missing', () => {
  assert.throws(
    () => apply({ SVC_WEBHOOK_ALLOWED_IPS: '10.0.0.0/8' }),
    (err: unknown) => err instanceof EnvironmentError && err.message === 'SVC_WEBHOOK_ALLOWED_IPS is set, but this version of svc has no webhook intake; unset it',
  );
  for (const name of Object.keys(UNSUPPORTED_VARIABLES)) {
    assert.throws(() => apply({ [name]: 'x' }), (err: unknown) => err instanceof EnvironmentError && err.message.startsWith(`${name} is set, but this version of svc has no `), name);
    assert.ok(!(name in ENVIRONMENT_VARIABLES), `${name} is refused, so it is not a supported variable`);
  }
  const both = (() => {
    try {
      apply({ SVC_UPDATE_CHECK: '1', SVC_IOS_KEY_ID: 'K' });
    } catch (err) {
      return err instanceof EnvironmentError ? err.message : String(err);
    }
    return '';
  })();
  assert.match(both, /^environment variables refused:\n {2}- SVC_UPDATE_CHECK is set, .*\n {2}- SVC_IOS_KEY_ID is set, /);
});

test('an unsupported variable that is empty counts as unset, like every other variable', () => {
  assert.deepEqual(apply({ SVC_UPDATE_CHECK: '', SVC_SYNC_DISABLED: ' ' }), defaults);
});

test('property: the environment is refused exactly when an unsupported variable holds something other than blanks', () => {
  const names = [...Object.keys(UNSUPPORTED_VARIABLES), 'SVC_METRICS_PUBLIC', 'SVC_HOST'];
  fc.assert(
    fc.property(fc.dictionary(fc.constantFrom(...names), fc.oneof(fc.constant(''), fc.constant('  '), fc.string())), (env) => {
      const refused = Object.entries(env).some(([name, value]) => name in UNSUPPORTED_VARIABLES && value.trim() !== '');
      if (refused) assert.throws(() => apply(env), EnvironmentError);
      else assert.doesNotThrow(() => apply(env));
    }),
  );
});

test('resolveHome: --home, else SVC_HOME, else ~/.svc', () => {
  assert.equal(resolveHome({ SVC_HOME: '/srv/svc' }, '/tmp/flag'), '/tmp/flag');
  assert.equal(resolveHome({ SVC_HOME: '/srv/svc' }), '/srv/svc');
  assert.equal(resolveHome({}), join(homedir(), '.svc'));
});

test('property: envFlag is off exactly for 0/false/off/no (trimmed, any case), the fallback when unset or blank', () => {
  const OFF = ['0', 'false', 'off', 'no'];
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.constantFrom(...OFF, ' OFF', 'No ', '')), fc.boolean(), (value, fallback) => {
      const t = value.trim();
      const expected = t === '' ? fallback : !OFF.includes(t.toLowerCase());
      assert.equal(envFlag(value, fallback), expected);
    }),
  );
  assert.equal(envFlag(undefined, true), true);
});

test('every variable applyEnvironment reads is listed (and so documented) in ENVIRONMENT_VARIABLES, or refused', () => {
  const read = new Set<string>();
  const env = new Proxy<Record<string, string | undefined>>({}, {
    get: (_target, name) => {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
  });
  applyEnvironment(defaults, env);
  for (const name of read) assert.ok(name in ENVIRONMENT_VARIABLES || name in UNSUPPORTED_VARIABLES, name);
});
