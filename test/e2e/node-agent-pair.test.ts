// `node-agent pair` end to end (issue 13; docs/node-agent.md), black box: the built brain and
// dist/node-agent.mjs as processes. On loopback with --brain: the agent prints its code, `svc pair code`
// (the CLI against the brain) claims it, the agent exits 0 with its key kept 0600, the brain lists the
// node, and the key is a node principal (403 on an admin route, not 401); nobody claiming ends in the
// timeout (exit 1), an unreachable brain and bad flags fail at once. In network namespaces this test
// creates (test/helpers/mdns-netns.ts): the agent, given no address, finds the brain in the other
// namespace over mDNS and pairs. Networks: loopback and those namespaces only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT, SVC, startBrain } from '../helpers/brain-process';
import { isRoot, runTool } from '../helpers/external-tools';
import { createMeshNet, startBrainIn } from '../helpers/mdns-netns';
import type { PairedList } from '../../protocol/pairing';

const AGENT = join(ROOT, 'dist', 'node-agent.mjs');
const SKIP_NETNS = isRoot() ? false : 'needs root to create network namespaces (ip netns add); CI runs as root';

/** The environment of a board: no brain address, no key dir, no API token from the test's own shell. */
function boardEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const k of ['SVC_BRAIN_URL', 'SVC_NODE_KEY_DIR', 'SVC_API_TOKEN', 'SVC_URL']) if (!(k in extra)) delete env[k];
  return env;
}

interface Agent {
  out: string[];
  err: string[];
  exited: Promise<number | null>;
  /** The claim command's code once the agent printed it. */
  code: Promise<string>;
  kill(): void;
}

/** Runs `command args` (node dist/node-agent.mjs …, possibly inside `ip netns exec`), collecting its lines. */
function startAgent(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Agent {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  const err: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  createInterface({ input: child.stderr }).on('line', (l) => err.push(l));
  const code = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (l) => {
      out.push(l);
      const m = /^Claim it on the brain: svc pair code (\d{6})$/.exec(l);
      if (m) resolve(m[1]!);
    });
    void exited.then((c) => reject(new Error(`the agent exited (${c}) before printing its code:\n${out.join('\n')}\n${err.join('\n')}`)));
  });
  code.catch(() => undefined); // observed by the tests that wait for it; a test that expects no code looks at exited
  return { out, err, exited, code, kill: () => child.exitCode === null && child.kill('SIGKILL') };
}

const scratch = (t: { after(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-agent-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

void test('loopback, --brain: code printed, claimed with `svc pair code`, exit 0; key 0600 is a node principal the brain lists (run with a key: node-agent-run.test.ts)', { timeout: 90_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  const keyDir = join(scratch(t), 'keys');
  const agent = startAgent(process.execPath, [AGENT, 'pair', '--brain', brain.url, '--node-id', 'rpi-garden', '--name', 'Garden Pi', '--key-dir', keyDir, '--timeout', '120'], boardEnv());
  t.after(() => agent.kill());
  const code = await agent.code;
  assert.equal(agent.out[0], `Pairing code: ${code.slice(0, 3)} ${code.slice(3)}`);

  const claim = await runTool(process.execPath, [SVC, 'pair', 'code', code, '--url', brain.url, '--home', brain.home], { env: boardEnv() });
  assert.equal(claim.code, 0, claim.stderr);
  assert.match(claim.stdout, /^paired node rpi-garden \("Garden Pi"\) as dev_/);

  assert.equal(await agent.exited, 0, agent.err.join('\n'));
  const keyFile = join(keyDir, 'rpi-garden.key');
  assert.match(agent.out.at(-1)!, new RegExp(`^Paired as dev_\\S+; node key saved to ${keyFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  assert.equal(statSync(keyDir).mode & 0o777, 0o700);
  const key = readFileSync(keyFile, 'utf8').trim();
  assert.match(key, /^svcdk_/);

  const paired = (await (await brain.api('/api/devices/paired')).json()) as PairedList;
  const node = paired.devices.find((d) => d.node_id === 'rpi-garden');
  assert.ok(node, JSON.stringify(paired));
  assert.equal(node.kind, 'node');
  assert.equal(node.name, 'Garden Pi');
  const asNode = await fetch(`${brain.url}/api/devices/paired`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(asNode.status, 403, 'the key authenticates (a node principal) but may not use admin routes');
  assert.equal((await fetch(`${brain.url}/api/devices/paired`, { headers: { authorization: `Bearer svcdk_${'x'.repeat(43)}` } })).status, 401, 'an unknown key, by contrast');

});

void test('nobody claims: the timeout ends it with exit 1 and the brain still has the code pending; unreachable brain and bad flags fail at once', { timeout: 60_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  const keyDir = join(scratch(t), 'keys');
  const agent = startAgent(process.execPath, [AGENT, 'pair', '--brain', brain.url, '--node-id', 'esp-lonely', '--key-dir', keyDir, '--timeout', '1'], boardEnv());
  t.after(() => agent.kill());
  const code = await agent.code;
  assert.equal(await agent.exited, 1);
  assert.match(agent.err.join('\n'), new RegExp(`not paired within 1 s \\(nobody claimed ${code.slice(0, 3)} ${code.slice(3)}\\)`));
  assert.throws(() => statSync(join(keyDir, 'esp-lonely.key')), /ENOENT/);
  const status = (await (await fetch(`${brain.url}/api/devices/pair/status?code=${code}&node_id=esp-lonely`)).json()) as { status: string };
  assert.equal(status.status, 'pending', 'the agent announced the code the brain knows');

  const closed = `http://127.0.0.1:${brain.port}`.replace(/:\d+$/, ':1');
  const gone = await runTool(process.execPath, [AGENT, 'pair', '--brain', closed, '--node-id', 'n1', '--key-dir', keyDir], { env: boardEnv() });
  assert.equal(gone.code, 1);
  assert.match(gone.stderr, /cannot reach the brain at http:\/\/127\.0\.0\.1:1/);
  assert.equal(gone.stdout, '', 'no code is shown for a brain that did not take it');

  const bad = await runTool(process.execPath, [AGENT, 'pair', '--node-id', 'has space', '--brain', brain.url], { env: boardEnv() });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--node-id: node id "has space" is not/);
  const badEnv = await runTool(process.execPath, [AGENT, 'pair', '--node-id', 'n1'], { env: boardEnv({ SVC_BRAIN_URL: 'pi.local:9090' }) });
  assert.equal(badEnv.code, 1);
  assert.match(badEnv.stderr, /SVC_BRAIN_URL .*not an http/);
});

void test('namespaces, no --brain: the agent finds the brain (lan mode, another namespace) over mDNS and pairs', { skip: SKIP_NETNS, timeout: 120_000 }, async (t) => {
  const net = await createMeshNet('nap');
  t.after(() => net.destroy());
  const brain = await startBrainIn(net.brainNs, { args: ['--host', '0.0.0.0'] });
  t.after(() => brain.stop());
  const keyDir = join(scratch(t), 'keys');
  const spawnedAt = Date.now();
  const agent = startAgent('ip', ['netns', 'exec', net.peerNs, process.execPath, AGENT, 'pair', '--node-id', 'rpi-far', '--key-dir', keyDir, '--timeout', '60'], boardEnv());
  t.after(() => agent.kill());
  const code = await agent.code;
  t.diagnostic(`code shown ${Date.now() - spawnedAt} ms after the agent was spawned (mDNS discovery and the announce)`);
  assert.match(agent.err.join('\n'), new RegExp(`with the brain at http://${net.brainV4.replace(/\./g, '\\.')}:${brain.port} \\(mDNS: svc-`));

  // The person claims it on the brain's machine (the brain's namespace).
  const claim = await runTool('ip', ['netns', 'exec', net.brainNs, process.execPath, SVC, 'pair', 'code', code, '--url', `http://127.0.0.1:${brain.port}`, '--home', brain.home], { env: boardEnv() });
  assert.equal(claim.code, 0, claim.stderr);
  assert.equal(await agent.exited, 0, agent.err.join('\n'));
  assert.equal(statSync(join(keyDir, 'rpi-far.key')).mode & 0o777, 0o600);
});
