// Phone-bridged BLE end to end, black box: the built brain (dist/svc.mjs) with the fake OpenAI server
// as its model, and the built reference client (dist/phone-bridge.mjs) as the phone. A node pairing
// token for phone-kitchen is minted with the API and its svc://pair URL built for loopback with the
// brain's id (the brain's own pair URL needs `svc access lan`: that path is the netns test below); the client
// pairs from it and runs; GET /api/devices/connected and `svc bridge list` show the bulb and strap as
// phone_ble online; a chat turn whose model calls hwdev_bulb__set_power switches the simulated bulb
// (the brain's verify loop reads it back: verified true); heart-rate readings reach the device list;
// kill -9 of the phone: its peripherals go offline and a command fails at once with "device offline";
// `chat` as the phone gets the model's answer; the phone started again is back online and chats from
// stdin on the same link; revoking its key ends it (77).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadBrainId } from '../../mesh/brain-id';
import { encodePairUrl, parsePairUrl } from '../../mesh/pair-payload';
import type { CommandList, ConnectedDevice, ConnectedDeviceList } from '../../protocol/hardware';
import type { MintedPair } from '../../protocol/pairing';
import { ROOT, SVC, startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import { isRoot, runTool } from '../helpers/external-tools';
import { createVethNamespace, deleteNamespace, startBrainInNamespace, vethPlan } from '../helpers/netns';
import { startOpenAiServer, type FakeReply, type FakeServer, type RecordedRequest } from '../fakes/openai-server';

const BRIDGE = join(ROOT, 'dist', 'phone-bridge.mjs');

interface Phone {
  child: ChildProcess;
  err: string[];
  out: string[];
  exited: Promise<number | null>;
  /** Resolves when a line of stderr or stdout matches. */
  said(pattern: RegExp): Promise<string>;
}

function bridgeEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['SVC_BRAIN_URL', 'SVC_PHONE_BRIDGE_KEY_DIR', 'SVC_API_TOKEN', 'SVC_URL']) delete env[k];
  return env;
}

function startPhone(args: string[]): Phone {
  const child = spawn(process.execPath, [BRIDGE, ...args], { env: bridgeEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  const err: string[] = [];
  const out: string[] = [];
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const collect = (lines: string[]) => (line: string) => {
    lines.push(line);
    for (const w of waiting.filter((w) => w.pattern.test(line))) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve(line);
    }
  };
  createInterface({ input: child.stderr }).on('line', collect(err));
  createInterface({ input: child.stdout }).on('line', collect(out));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    err,
    out,
    exited,
    said: (pattern) => {
      const seen = [...err, ...out].find((l) => pattern.test(l));
      return seen !== undefined ? Promise.resolve(seen) : new Promise((resolve) => waiting.push({ pattern, resolve }));
    },
  };
}

type Message = { role: string; content?: unknown };
const messagesOf = (req: RecordedRequest): Message[] => (Array.isArray(req.body?.messages) ? (req.body.messages as Message[]) : []);

/** The model: "switch the bulb on|off" calls hwdev_bulb__set_power; after a tool result it repeats it; anything else is plain text. */
function scriptModel(fake: FakeServer): void {
  let calls = 0;
  fake.reply((req): FakeReply => {
    const messages = messagesOf(req);
    if (messages[0]?.role === 'system' && String(messages[0].content).startsWith('Extract the facts')) return { kind: 'text', chunks: ['{"triples":[]}'] };
    const last = messages.at(-1);
    const order = last?.role === 'user' ? /^switch the bulb (on|off)$/.exec(String(last.content)) : null;
    if (order) return { kind: 'tool_calls', calls: [{ id: `call_${++calls}`, name: 'hwdev_bulb__set_power', argumentChunks: [JSON.stringify({ on: order[1] === 'on' })] }] };
    if (last?.role === 'tool') return { kind: 'text', chunks: [`TOOL RESULT ${String(last.content)}`] };
    return { kind: 'text', chunks: ['The bulb is fine.'] };
  });
}

async function connected(brain: BrainProcess): Promise<ConnectedDevice[]> {
  const r = await brain.api('/api/devices/connected');
  assert.equal(r.status, 200);
  return ((await r.json()) as ConnectedDeviceList).devices.filter((d) => d.transport === 'phone_ble');
}

/** Polls the device list until `check` holds (the brain learns of sockets and frames asynchronously). */
async function until(brain: BrainProcess, what: string, check: (devices: ConnectedDevice[]) => boolean): Promise<ConnectedDevice[]> {
  let devices: ConnectedDevice[] = [];
  for (let i = 0; i < 200; i++) {
    devices = await connected(brain);
    if (check(devices)) return devices;
    await sleep(50);
  }
  assert.fail(`${what}: ${JSON.stringify(devices)}`);
}

const svc = (brain: BrainProcess, ...args: string[]) => runTool(process.execPath, [SVC, '--url', brain.url, ...args], { env: { ...process.env, SVC_HOME: brain.home, SVC_API_TOKEN: brain.token }, timeoutMs: 60_000 });

void test('phone bridge: pair from the URL, peripherals online as phone_ble, a tool call switches the bulb (verified), readings, kill -9 offline and "device offline", chat, back online', { timeout: 120_000 }, async (t) => {
  const fake = await startOpenAiServer();
  t.after(() => fake.close());
  scriptModel(fake);
  const home = tempHome('svc-phone-bridge-e2e-');
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ providers: { chain: [{ id: 'openai', kind: 'openai', base_url: fake.baseURL, keyless: true }] } }));
  const brain = await startBrain({ home });
  t.after(() => brain.stop());
  const keys = mkdtempSync(join(tmpdir(), 'svc-phone-keys-'));
  t.after(() => rmSync(keys, { recursive: true, force: true }));

  // `svc bridge pair` on a loopback-only brain names the fix.
  const local = await svc(brain, 'bridge', 'pair', '--name', 'Kitchen', '--no-wait');
  assert.equal(local.code, 1);
  assert.match(local.stderr, /fix: run `svc access lan`, then `svc pair` again/);

  const mint = await brain.api('/api/devices/pair', { method: 'POST', body: JSON.stringify({ kind: 'node', node_id: 'phone-kitchen', name: 'Kitchen' }) });
  assert.equal(mint.status, 201);
  const minted = (await mint.json()) as MintedPair;
  const url = encodePairUrl({ v: 1, kind: 'node', brain_id: loadBrainId(home), token: minted.token, expires_at: Math.floor(minted.expires_at), pin_required: false, urls: [brain.url], mdns: null });
  const paired = await runTool(process.execPath, [BRIDGE, 'pair', url, '--key-dir', keys, '--platform', 'ios'], { env: bridgeEnv() });
  assert.equal(paired.code, 0, paired.stderr);
  assert.match(paired.stdout, /^paired bridge phone-kitchen \("Kitchen"\) as dev_/);
  assert.equal(statSync(join(keys, 'phone-kitchen.key')).mode & 0o777, 0o600);

  const runArgs = ['run', '--brain', brain.url, '--key-dir', keys, '--name', 'Kitchen phone', '--platform', 'ios'];
  let phone = startPhone(runArgs);
  t.after(() => phone.child.kill('SIGKILL'));
  await phone.said(/^phone-bridge: registered as phone-kitchen/);
  let devices = await until(brain, 'bulb and strap online', (ds) => ds.filter((d) => d.online).length === 2);
  assert.deepEqual(devices.map((d) => [d.device_id, d.node_id, d.type, d.online]).sort(), [['bulb', 'phone-kitchen', 'light', true], ['hr_strap', 'phone-kitchen', 'heart_rate_monitor', true]]);
  assert.ok(devices.find((d) => d.device_id === 'bulb')!.actions.some((a) => a.name === 'set_power' && a.tool === 'hwdev_bulb__set_power'));

  const list = await svc(brain, 'bridge', 'list');
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^bridge phone-kitchen: online, 2 peripherals\n/);
  assert.match(list.stdout, /bulb\s+Bedside bulb\s+light\s+online/);

  // A tool call from the model switches the simulated bulb; the brain reads it back (verify: get_state.on).
  const on = await svc(brain, 'switch the bulb on');
  assert.equal(on.code, 0, on.stderr);
  assert.match(on.stdout, /TOOL RESULT .*"success":true/);
  assert.match(on.stdout, /"verified":true/);
  await phone.said(/^phone-bridge: bulb\.set_power \{"on":true\} -> \{"on":true,"brightness":80\}$/);
  const recent = (await (await brain.api('/api/commands/recent?device=bulb')).json()) as CommandList;
  assert.deepEqual(recent.commands.map((c) => [c.action, c.status, c.verified, c.params.on]), [['set_power', 'succeeded', true, true]]);

  devices = await until(brain, 'a heart-rate reading', (ds) => typeof ds.find((d) => d.device_id === 'hr_strap')?.readings.bpm?.value === 'number');
  const bpm = devices.find((d) => d.device_id === 'hr_strap')!.readings.bpm!.value as number;
  assert.ok(bpm >= 55 && bpm <= 95, `bpm ${bpm}`);

  // The phone dies: its peripherals go offline, and a command fails at once instead of waiting.
  phone.child.kill('SIGKILL');
  await phone.exited;
  await until(brain, 'offline after kill -9', (ds) => ds.length === 2 && ds.every((d) => !d.online));
  const offline = await svc(brain, 'switch the bulb off');
  assert.equal(offline.code, 0, offline.stderr);
  assert.match(offline.stdout, /TOOL RESULT .*device offline/);
  const failed = (await (await brain.api('/api/commands/recent?device=bulb&limit=1')).json()) as CommandList;
  assert.deepEqual(failed.commands.map((c) => [c.status, c.params.on]), [['failed', false]]);

  // While no bridge runs, the phone may chat as itself.
  const chat = await runTool(process.execPath, [BRIDGE, 'chat', 'how is the bulb?', '--session', 'phone-chat', '--brain', brain.url, '--key-dir', keys, '--timeout', '60'], { env: bridgeEnv() });
  assert.equal(chat.code, 0, chat.stderr);
  assert.equal(chat.stdout, 'The bulb is fine.\n');

  // Started again, with --session: it bridges and chats on one link.
  phone = startPhone([...runArgs, '--session', 'kitchen']);
  await until(brain, 'back online after a restart of the phone', (ds) => ds.filter((d) => d.online).length === 2);
  phone.child.stdin!.write('how is the bulb?\n');
  assert.equal(await phone.said(/bulb is fine/), 'The bulb is fine.');
  const again = await svc(brain, 'switch the bulb off');
  assert.match(again.stdout, /"verified":true/);
  await phone.said(/^phone-bridge: bulb\.set_power \{"on":false\} -> \{"on":false,"brightness":80\}$/);

  // Revoking the phone's key ends the bridge: exit 77, and it does not come back.
  const pairedList = (await (await brain.api('/api/devices/paired')).json()) as { devices: { device_id: string; node_id: string | null }[] };
  const deviceId = pairedList.devices.find((d) => d.node_id === 'phone-kitchen')!.device_id;
  assert.equal((await brain.api(`/api/devices/${deviceId}`, { method: 'DELETE' })).status, 200);
  assert.equal(await phone.exited, 77);
  assert.ok(phone.err.some((l) => /4001/.test(l)), phone.err.join('\n'));
});

const NET = vethPlan('bridge', 238);

void test('svc bridge pair off loopback: the QR URL for phone-<name> is completed by the reference client from another namespace, which then runs against the brain there', { skip: isRoot() ? false : 'needs root to create a network namespace (ip netns add); CI runs as root', timeout: 90_000 }, async (t) => {
  t.after(() => deleteNamespace(NET));
  await createVethNamespace(NET);
  const home = mkdtempSync(join(tmpdir(), 'svc-bridge-netns-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const brain = await startBrainInNamespace(NET.ns, { home });
  t.after(() => brain.stop());
  const inside = (...args: string[]) => runTool('ip', ['netns', 'exec', NET.ns, process.execPath, SVC, '--url', `http://127.0.0.1:${brain.port}`, ...args], { env: { ...process.env, SVC_HOME: home, SVC_API_TOKEN: '' } });
  assert.equal((await inside('access', 'lan')).code, 0);

  const minted = await inside('bridge', 'pair', '--name', 'Ada Pixel', '--no-wait', '--json');
  assert.equal(minted.code, 0, minted.stderr);
  const { url } = JSON.parse(minted.stdout) as { url: string };
  const payload = parsePairUrl(url);
  const base = `http://${NET.nsV4}:${brain.port}`;
  assert.ok(payload.urls.includes(base), payload.urls.join(', '));
  assert.equal(payload.kind, 'node');

  const keys = mkdtempSync(join(tmpdir(), 'svc-bridge-netns-keys-'));
  t.after(() => rmSync(keys, { recursive: true, force: true }));
  const paired = await runTool(process.execPath, [BRIDGE, 'pair', url, '--key-dir', keys], { env: bridgeEnv() });
  assert.equal(paired.code, 0, paired.stderr);
  assert.match(paired.stdout, /^paired bridge phone-ada-pixel \("Ada Pixel"\) as dev_/);

  const phone = startPhone(['run', '--brain', base, '--key-dir', keys]);
  t.after(() => phone.child.kill('SIGKILL'));
  await phone.said(/^phone-bridge: registered as phone-ada-pixel/);
  let listed = '';
  for (let i = 0; i < 100 && !/online, 2 peripherals/.test(listed); i++) {
    listed = (await inside('bridge', 'list')).stdout;
    await sleep(50);
  }
  assert.match(listed, /^bridge phone-ada-pixel: online, 2 peripherals\n/);
  phone.child.kill('SIGTERM');
  assert.equal(await phone.exited, 0, 'SIGTERM: node_bye and exit 0');
});
