// systemd/svc-brain.service and svc-node-agent.service: systemd's own checks (verify, offline
// security score), the contract the units promise (ARCHITECTURE.md "Processes", STYLE.md 13), and
// the brain's ExecStart run as systemd would run it, talking to a stand-in notification socket.
// `systemd-analyze verify` (systemd 252) checks directives, values and that the ExecStart binary is
// executable; it does not resolve User=, so the `svc` user need not exist here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, runTool } from '../helpers/external-tools';
import { listenNotify } from '../helpers/notify-socket';
import { BRAIN_ENV, BRAIN_NODE_FLAGS } from '../../cli/brain-runtime';
import { EXIT_CONFIG, EXIT_LOCKED } from '../../daemon/main';

const ROOT = repoRoot();
const UNITS = ['svc-brain.service', 'svc-node-agent.service'] as const;
const INSTALL_DIR = '/opt/svc';

type Unit = Map<string, [string, string][]>;

/** systemd.syntax(7) without line continuations (the units use none; parsing refuses them). */
function parseUnit(text: string): Unit {
  const unit: Unit = new Map();
  let section: [string, string][] | undefined;
  for (const [n, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    assert.ok(!line.endsWith('\\'), `line ${n + 1}: continuation lines are not used in svc units`);
    const header = /^\[(.+)\]$/.exec(line);
    if (header) unit.set(header[1]!, (section = []));
    else {
      const eq = line.indexOf('=');
      assert.ok(section && eq > 0, `line ${n + 1} is neither a section nor Key=Value: ${line}`);
      section.push([line.slice(0, eq), line.slice(eq + 1)]);
    }
  }
  return unit;
}

const values = (unit: Unit, key: string, section = 'Service'): string[] => (unit.get(section) ?? []).filter(([k]) => k === key).map(([, v]) => v);
const one = (unit: Unit, key: string, section = 'Service'): string | undefined => values(unit, key, section).at(-1);
const load = (name: string): { text: string; unit: Unit } => {
  const text = readFileSync(join(ROOT, 'systemd', name), 'utf8');
  return { text, unit: parseUnit(text) };
};
const words = (s: string | undefined): string[] => (s ?? '').split(/\s+/).filter(Boolean);

function tempDir(t: { after(fn: () => unknown): void }, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The unit as it would be installed from this checkout: real node binary, real dist/ path. */
const installedHere = (text: string): string =>
  text.replace(/^ExecStart=\/usr\/bin\/env node /m, `ExecStart=${process.execPath} `).replaceAll(INSTALL_DIR, ROOT);

void test('systemd-analyze verify accepts both units as shipped and as installed from this checkout, printing nothing', async (t) => {
  const dir = tempDir(t, 'svc-units-');
  for (const name of UNITS) copyFileSync(join(ROOT, 'systemd', name), join(dir, name));
  const shipped = await runTool('systemd-analyze', ['verify', '--man=no', ...UNITS.map((u) => join(dir, u))]);
  assert.deepEqual(shipped, { code: 0, stdout: '', stderr: '' });

  const installed = join(dir, 'installed');
  mkdirSync(installed);
  for (const name of UNITS) {
    const text = installedHere(readFileSync(join(ROOT, 'systemd', name), 'utf8'));
    const argv = words(one(parseUnit(text), 'ExecStart'));
    const program = argv.find((a) => a.endsWith('.mjs'));
    assert.ok(program && existsSync(program), `${name}: the ExecStart program exists after the build: ${argv.join(' ')}`);
    writeFileSync(join(installed, name), text);
  }
  const real = await runTool('systemd-analyze', ['verify', '--man=no', ...UNITS.map((u) => join(installed, u))]);
  assert.deepEqual(real, { code: 0, stdout: '', stderr: '' });
});

void test('systemd-analyze security rates both units OK (exposure at most 2.5 of 10)', async () => {
  for (const name of UNITS) {
    const r = await runTool('systemd-analyze', ['security', '--offline=yes', join(ROOT, 'systemd', name)]);
    const m = /Overall exposure level for \S+: (\d+\.\d+)/.exec(r.stdout);
    assert.ok(m, `${name}: no exposure level in\n${r.stdout}${r.stderr}`);
    assert.ok(Number(m[1]) <= 2.5, `${name}: exposure ${m[1]}\n${r.stdout}`);
  }
});

void test('both units: Type=notify with watchdog, user svc with a persistent state dir, bounded stop, hardened', () => {
  for (const name of UNITS) {
    const { text, unit } = load(name);
    const expect = (key: string, value: string): void => assert.equal(one(unit, key), value, `${name}: ${key}`);
    expect('Type', 'notify');
    expect('NotifyAccess', 'all'); // messages come from a systemd-notify child (daemon/lifecycle/sd-notify.ts)
    expect('WatchdogSec', '30');
    expect('User', 'svc');
    expect('Restart', 'on-failure');
    expect('TimeoutStopSec', '10');
    expect('KillSignal', 'SIGTERM');
    assert.equal(one(unit, 'DynamicUser'), undefined, `${name}: $SVC_HOME must keep one owner across boots`);
    const state = one(unit, 'StateDirectory')!;
    assert.ok(values(unit, 'Environment').includes(`SVC_HOME=/var/lib/${state}`), `${name}: SVC_HOME is the state directory`);
    for (const key of ['NoNewPrivileges', 'ProtectHome', 'PrivateTmp', 'ProtectKernelTunables', 'ProtectKernelModules', 'ProtectKernelLogs', 'ProtectControlGroups', 'LockPersonality', 'RestrictRealtime', 'RestrictSUIDSGID']) {
      expect(key, 'yes');
    }
    expect('ProtectSystem', 'strict');
    expect('SystemCallArchitectures', 'native');
    assert.ok(!/^\s*MemoryDenyWriteExecute\s*=/m.test(text), `${name}: V8's JIT needs W+X pages`);
    assert.ok(/^#LoadCredential=|^LoadCredential=/m.test(text) || name !== 'svc-brain.service', 'brain shows how to load vault.key as a credential');
    assert.deepEqual(words(one(unit, 'ExecStart')).slice(0, 2), ['/usr/bin/env', 'node'], `${name}: node from systemd's PATH`);
  }
});

void test('svc-brain.service: no devices, inet + unix (+ netlink for interface lookup), same runtime flags as svc start, no restart on config errors', () => {
  const { unit } = load('svc-brain.service');
  assert.equal(one(unit, 'PrivateDevices'), 'yes');
  assert.deepEqual(words(one(unit, 'RestrictAddressFamilies')).sort(), ['AF_INET', 'AF_INET6', 'AF_NETLINK', 'AF_UNIX']);
  const argv = words(one(unit, 'ExecStart'));
  assert.deepEqual(argv, ['/usr/bin/env', 'node', ...BRAIN_NODE_FLAGS, `${INSTALL_DIR}/dist/svc.mjs`, 'serve']);
  for (const [k, v] of Object.entries(BRAIN_ENV)) assert.ok(values(unit, 'Environment').includes(`${k}=${v}`), `Environment=${k}=${v}`);
  assert.deepEqual(words(one(unit, 'RestartPreventExitStatus')).map(Number).sort(), [EXIT_LOCKED, EXIT_CONFIG].sort());
  assert.equal(one(unit, 'StateDirectory'), 'svc');
});

void test('svc-node-agent.service: serial devices through dialout + DeviceAllow, Bluetooth and netlink sockets, no restart on exit 77 or 78', () => {
  const { unit } = load('svc-node-agent.service');
  assert.equal(one(unit, 'PrivateDevices'), 'no');
  assert.equal(one(unit, 'DevicePolicy'), 'closed');
  assert.ok(words(one(unit, 'SupplementaryGroups')).includes('dialout'));
  const allowed = values(unit, 'DeviceAllow');
  for (const dev of ['char-ttyUSB', 'char-ttyACM', 'char-ttyAMA']) assert.ok(allowed.includes(`${dev} rw`), `DeviceAllow=${dev} rw`);
  assert.deepEqual(words(one(unit, 'RestrictAddressFamilies')).sort(), ['AF_BLUETOOTH', 'AF_INET', 'AF_INET6', 'AF_NETLINK', 'AF_UNIX']);
  assert.deepEqual(words(one(unit, 'ExecStart')), ['/usr/bin/env', 'node', `${INSTALL_DIR}/dist/node-agent.mjs`]);
  assert.deepEqual(words(one(unit, 'RestartPreventExitStatus')).map(Number).sort(), [77, EXIT_CONFIG].sort(), 'a refused key (77) and a bad config (78) are not fixed by restarting');
  assert.notEqual(one(unit, 'StateDirectory'), 'svc', 'the brain locks /var/lib/svc; the agent keeps its own');
});

/** The brain's ExecStart and Environment=, with this checkout's paths, a temp home and a test port. */
function brainCommand(home: string, extraEnv: Record<string, string>): { argv: string[]; env: NodeJS.ProcessEnv } {
  const unit = parseUnit(installedHere(readFileSync(join(ROOT, 'systemd', 'svc-brain.service'), 'utf8')));
  const unitEnv = Object.fromEntries(values(unit, 'Environment').map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  const argv = words(one(unit, 'ExecStart'));
  return { argv, env: { ...process.env, ...unitEnv, SVC_HOME: home, SVC_PORT: '0', SVC_API_TOKEN: '', ...extraEnv } };
}

void test("the brain's ExecStart reports READY=1 with its MAINPID, pings the watchdog, and on KillSignal sends STOPPING=1 and exits 0 within TimeoutStopSec", async (t) => {
  const dir = tempDir(t, 'svc-unit-run-');
  const sock = await listenNotify(dir);
  t.after(() => sock.close());
  // WatchdogSec=30 makes systemd set WATCHDOG_USEC=30000000 (a ping every 10 s); 3 s keeps the test short.
  const { argv, env } = brainCommand(join(dir, 'home'), { NOTIFY_SOCKET: sock.path, WATCHDOG_USEC: '3000000' });
  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.after(() => child.kill('SIGKILL'));

  const ready = await sock.waitFor('READY=1', 15_000).catch((err: Error) => assert.fail(`${err.message}\n${output}`));
  assert.ok(ready.includes(`MAINPID=${child.pid}`), JSON.stringify(ready));
  await sock.waitFor('WATCHDOG=1', 10_000);

  const { unit } = load('svc-brain.service');
  child.kill(one(unit, 'KillSignal') as NodeJS.Signals);
  await sock.waitFor('STOPPING=1');
  const stopSec = Number(one(unit, 'TimeoutStopSec'));
  const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), stopSec * 1000).unref())]);
  assert.equal(code, 0, output);
});

void test('a configuration error exits with a status in RestartPreventExitStatus, so systemd does not restart-loop it', async (t) => {
  const dir = tempDir(t, 'svc-unit-config-');
  const home = join(dir, 'home');
  mkdirSync(home);
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ server: { port: 'ninety' } }));
  const { argv, env } = brainCommand(home, {});
  const r = await runTool(argv[0]!, argv.slice(1), { env, timeoutMs: 15_000 });
  const prevented = words(one(load('svc-brain.service').unit, 'RestartPreventExitStatus')).map(Number);
  assert.ok(r.code !== null && prevented.includes(r.code), `exit ${r.code}\n${r.stderr}`);
  assert.match(r.stderr, /settings\.json is invalid/);
});
