// Daemon delivery end to end, black box: the built brain and the built node-agent as processes. The
// brain trusts a publisher and installs a signed daemon for node rpi-garden from a tarball served on
// loopback (POST /api/daemons/install); the board, holding a node key minted for rpi-garden, links,
// asks GET /api/daemons/mine after its node_ack, downloads the bundle, extracts it under its state
// directory and reports installed; its driver (describe() in the QuickJS sandbox) becomes a device of
// the node, reported running, which the admin sees in GET /api/daemons/delivery; the brain lists the
// device with its generated hwdev_* tool and runs its action over MCP through the node. Then a newer
// version whose files were damaged on the brain after their digest was offered is refused by the board
// (sha256 mismatch), reported failed with the reason, and the board keeps the version it held and runs it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeNodeKey } from '../../mesh/node-key-store';
import type { DaemonDelivery, DaemonDeliveryList, MyDaemon } from '../../protocol/daemons';
import { packArchive, type ArchiveFile } from '../../signing/archive';
import { sha256Hex, signArtifact } from '../../signing/detached';
import { ROOT, startBrain, type BrainProcess } from '../helpers/brain-process';
import type { ConnectedDeviceList } from '../../protocol/hardware';
import { publisherKey } from '../helpers/registry-bundles';
import { httpClient } from '../helpers/mcp-rig';

const AGENT = join(ROOT, 'dist', 'node-agent.mjs');
const NODE = 'rpi-garden';
const DRIVER = `
function describe() {
  return { device_id: 'soil', device_type: 'moisture_sensor', name: 'Soil probe', capabilities: ['moisture'], actions: [{ name: 'read_moisture', category: 'sensor', description: 'Reads the soil moisture' }] };
}
function on_action(name, params) {
  log('read ' + name);
  return { moisture: 42 };
}
`;

/** A daemon bundle whose entry is the soil driver; `brand` tells versions apart. */
const driverFiles = (version: string, brand: string): ArchiveFile[] => [
  { path: 'manifest.json', bytes: new TextEncoder().encode(JSON.stringify({ node_id: NODE, version, entry: 'bin/driver.js', brand: { name: brand } })) },
  { path: 'bin/driver.js', bytes: new TextEncoder().encode(DRIVER) },
];

function boardEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const k of ['SVC_BRAIN_URL', 'SVC_NODE_KEY_DIR', 'SVC_NODE_KEY', 'SVC_API_TOKEN', 'SVC_URL', 'NOTIFY_SOCKET', 'WATCHDOG_USEC']) if (!(k in extra)) delete env[k];
  return env;
}

/** A loopback server of tarballs by path. */
async function serveTarballs(t: { after(fn: () => Promise<void>): void }): Promise<{ put(path: string, bytes: Uint8Array): string }> {
  const files = new Map<string, Uint8Array>();
  const server: Server = createServer((req, res) => {
    const bytes = files.get(req.url ?? '');
    res.writeHead(bytes ? 200 : 404, { 'content-type': 'application/gzip' }).end(bytes ? Buffer.from(bytes) : undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    put: (path, bytes) => {
      files.set(path, bytes);
      return `${base}${path}`;
    },
  };
}

/** A node key for NODE minted by the brain (pair token, then complete with it). */
async function nodeKey(brain: BrainProcess): Promise<string> {
  const minted = (await (await brain.api('/api/devices/pair', { method: 'POST', body: JSON.stringify({ kind: 'node', node_id: NODE, name: 'Garden Pi' }) })).json()) as { token: string };
  const done = await fetch(`${brain.url}/api/devices/pair/complete`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: minted.token }) });
  assert.equal(done.status, 201);
  return ((await done.json()) as { device_key: string }).device_key;
}

function startAgent(args: readonly string[], env: NodeJS.ProcessEnv): { lines: string[]; exited: Promise<number | null>; signal(s: NodeJS.Signals): void } {
  const child = spawn(process.execPath, [AGENT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  createInterface({ input: child.stderr }).on('line', (l) => lines.push(l));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { lines, exited, signal: (s) => child.exitCode === null && child.kill(s) };
}

async function delivery(brain: BrainProcess, until: (d: DaemonDelivery) => boolean, why: () => string): Promise<DaemonDelivery> {
  let last = '';
  for (let waited = 0; waited < 30_000; waited += 100) {
    const list = (await (await brain.api('/api/daemons/delivery')).json()) as DaemonDeliveryList;
    last = JSON.stringify(list);
    const row = list.deliveries.find((d) => d.node_id === NODE);
    if (row !== undefined && until(row)) return row;
    await sleep(100);
  }
  throw new Error(`timed out: ${last}\n${why()}`);
}

async function install(brain: BrainProcess, url: string, archive: Uint8Array, key: ReturnType<typeof publisherKey>): Promise<void> {
  const res = await brain.api('/api/daemons/install', { method: 'POST', body: JSON.stringify({ url, sha256: sha256Hex(archive), signature: signArtifact(archive, key) }) });
  assert.equal(res.status, 201, await res.text());
}

void test('a daemon installed on the brain is delivered to its node-agent and reported installed; a bundle damaged on the brain is refused and reported failed', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-e2e-delivery-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const brain = await startBrain();
  t.after(() => brain.stop());
  const tarballs = await serveTarballs(t);
  const publisher = publisherKey();
  assert.equal((await brain.api(`/api/publishers/keys/${publisher.keyId}`, { method: 'PUT', body: JSON.stringify({ public_key: publisher.publicKey }) })).status, 200);

  const v1 = packArchive(driverFiles('1.0.0', 'Garden soil'));
  await install(brain, tarballs.put('/v1.tgz', v1), v1, publisher);
  assert.equal((await delivery(brain, () => true, () => '')).state, 'pending');

  const keyDir = join(dir, 'state', 'keys');
  const key = await nodeKey(brain);
  await writeNodeKey(keyDir, NODE, key);
  const args = ['run', '--brain', brain.url, '--node-id', NODE, '--key-dir', keyDir];
  const env = boardEnv({ SVC_NODE_CONFIG: '', HOME: dir });
  let agent = startAgent(args, env);
  t.after(() => agent.signal('SIGKILL'));

  const running = await delivery(brain, (d) => d.state === 'running' || d.state === 'failed', () => agent.lines.join('\n'));
  assert.deepEqual([running.version, running.state, running.error], ['1.0.0', 'running', null], agent.lines.join('\n'));
  const held = join(dir, 'state', 'daemons', NODE);
  assert.equal(readFileSync(join(held, '1.0.0', 'bin', 'driver.js'), 'utf8'), DRIVER);
  assert.equal((JSON.parse(readFileSync(join(held, 'held.json'), 'utf8')) as { version: string }).version, '1.0.0');
  assert.ok(agent.lines.some((l) => /daemon Garden soil 1\.0\.0 delivered/.test(l)), agent.lines.join('\n'));

  // The driver's device on the brain, with its generated tool, run over MCP through the node.
  let soil: ConnectedDeviceList['devices'][number] | undefined;
  for (let waited = 0; soil === undefined && waited < 20_000; waited += 100) {
    soil = ((await (await brain.api('/api/devices/connected')).json()) as ConnectedDeviceList).devices.find((d) => d.device_id === 'soil' && d.online);
    if (soil === undefined) await sleep(100);
  }
  assert.ok(soil, `the soil probe online on the brain\n${agent.lines.join('\n')}`);
  assert.equal(soil.node_id, NODE);
  assert.deepEqual(soil.actions.map((a) => a.tool), ['hwdev_soil__read_moisture']);
  const mcp = await httpClient(brain.url, brain.token);
  t.after(() => mcp.close());
  const called = (await mcp.callTool({ name: 'hwdev_soil__read_moisture', arguments: {} })) as { content: { type: string; text: string }[]; isError?: boolean };
  assert.notEqual(called.isError, true, JSON.stringify(called));
  assert.match(called.content.map((c) => c.text).join(''), /"moisture":\s*42/);

  // 1.1.0: its digest is offered to the node (and kept by the brain), then its files are damaged on disk.
  const v2 = packArchive(driverFiles('1.1.0', 'Garden soil II'));
  await install(brain, tarballs.put('/v2.tgz', v2), v2, publisher);
  const mine = (await (await fetch(`${brain.url}/api/daemons/mine`, { headers: { authorization: `Bearer ${key}` } })).json()) as MyDaemon;
  assert.equal(mine.daemon?.version, '1.1.0');
  assert.equal(mine.daemon.sha256, sha256Hex(v2), 'a bundle packed with packArchive is offered with the signed bytes\' digest');
  // Same length, other bytes: the bundle usually packs to the same size, so the digest is what differs.
  writeFileSync(join(brain.home, 'daemons', NODE, '1.1.0', 'bin', 'driver.js'), DRIVER.replace('42', '24'));

  // The board asks again after its next node_ack: restart it.
  agent.signal('SIGTERM');
  assert.equal(await agent.exited, 0);
  agent = startAgent(args, env);
  const failed = await delivery(brain, (d) => d.state === 'failed', () => agent.lines.join('\n'));
  assert.equal(failed.version, '1.1.0');
  assert.match(failed.error ?? '', /^sha256 mismatch: the bundle is [0-9a-f]{64}, the brain's offer names [0-9a-f]{64}$|^size mismatch: /);
  assert.deepEqual(readdirSync(held).sort(), ['1.0.0', 'held.json'], 'the board keeps what it held');
  assert.equal(existsSync(join(held, '1.1.0')), false);
  assert.ok(agent.lines.some((l) => /the daemon's driver runs/.test(l)), 'the held 1.0.0 driver runs again in the restarted agent');
  agent.signal('SIGTERM');
  assert.equal(await agent.exited, 0);
});
