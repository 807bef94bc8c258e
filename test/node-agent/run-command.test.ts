// run-command.ts as a function (the process is test/e2e/node-agent-run.test.ts): what it refuses
// before it touches the network, and the capabilities a node registers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EX_CONFIG, EXIT_FAILED, nodeCapabilities, runCommand, type RunContext, type RunLog } from '../../node-agent/run-command';

const log: RunLog = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => log };

function context(t: { after(fn: () => void): void }, over: Partial<RunContext> = {}): { ctx: RunContext; err: () => string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-run-cmd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let err = '';
  const ctx: RunContext = {
    io: { out: { write: () => true }, err: { write: (s: string) => (err += s) } },
    log,
    envBrain: undefined,
    envKey: undefined,
    defaultKeyDir: join(dir, 'keys'),
    defaultConfig: { file: join(dir, 'config.json'), explicit: false },
    hostname: 'rpi-hall',
    discover: () => Promise.resolve(null),
    pair: () => assert.fail('must not pair'),
    serialOpener: () => assert.fail('must not load serialport'),
    bleAdapter: () => assert.fail('must not load BLE'),
    notifier: { ready: () => undefined, status: () => undefined, watchdog: () => undefined, stopping: () => undefined, stop: () => undefined },
    watchdogMs: null,
    stop: new AbortController().signal,
    agentVersion: '0.1.0',
    uptimeS: () => 1,
    ...over,
  };
  return { ctx, err: () => err, dir };
}

void test('refusals before the network: an explicit config that is missing, a bad brain address, a host name that is no node id, no brain found', async (t) => {
  const a = context(t, { defaultConfig: { file: '/nonexistent/config.json', explicit: true } });
  assert.equal(await runCommand({}, a.ctx), EX_CONFIG);
  assert.match(a.err(), /\/nonexistent\/config\.json: no such file/);

  const b = context(t);
  writeFileSync(join(b.dir, 'config.json'), JSON.stringify({ brain: 'pi.local:9090' }));
  assert.equal(await runCommand({}, b.ctx), EX_CONFIG);
  assert.match(b.err(), /\/brain in the config file: .*not an http/);

  const c = context(t, { hostname: 'my host' });
  assert.equal(await runCommand({}, c.ctx), EX_CONFIG);
  assert.match(c.err(), /no config file at .*running with no devices\n.*host name cannot be the node id.*set node_id in the config file or give --node-id/s);

  const d = context(t);
  assert.equal(await runCommand({ nodeId: 'rpi-hall' }, d.ctx), EXIT_FAILED);
  assert.match(d.err(), /no brain found on this network; give --brain/);
});

void test('nodeCapabilities: the union of the devices’ capabilities and their actions’ capability fields, sorted', () => {
  assert.deepEqual(
    nodeCapabilities([
      { device_id: 'a', device_type: 't', name: 'a', capabilities: ['temperature', 'relay'], actions: [{ name: 'x', capability: 'gpio' }] },
      { device_id: 'b', device_type: 't', name: 'b', capabilities: ['temperature'], actions: [{ name: 'y' }] },
    ]),
    ['gpio', 'relay', 'temperature'],
  );
  assert.deepEqual(nodeCapabilities([]), []);
});
