// Pairing by QR code from another device, for real (issue 13, docs/pairing.md): the built brain runs in
// a network namespace this test creates, linked to this process by a veth pair on a private test subnet
// (10.234.N.0/30) — never the machine's own LAN. `svc access lan` (inside the namespace) lets the other
// end in; this process, as the phone, fetches the QR PNG, decodes it with zbarimg, completes pairing
// from the URL the code carries, and makes its first authenticated requests with its own key (a
// session on /v1/session; 403 on an admin route). Revoking it closes that socket (4001) and answers 401.
// Needs root for `ip netns`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { parsePairUrl } from '../../mesh/pair-payload';
import type { CompletePairResponse } from '../../protocol/pairing';
import { SVC } from '../helpers/brain-process';
import { isRoot, runTool, runToolOk } from '../helpers/external-tools';
import { createVethNamespace, deleteNamespace, startBrainInNamespace, vethPlan } from '../helpers/netns';

const NET = vethPlan('pair', 234);
const { ns: NS } = NET;
const BRAIN_V4 = NET.nsV4;

void test('QR from another namespace: PNG → zbarimg → complete from its URL → the device key opens a session and is 403 on admin routes; revoke closes it', { skip: isRoot() ? false : 'needs root to create a network namespace (ip netns add); CI runs as root', timeout: 90_000 }, async (t) => {
  t.after(() => deleteNamespace(NET));
  await createVethNamespace(NET);
  const home = mkdtempSync(join(tmpdir(), 'svc-pair-netns-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const brain = await startBrainInNamespace(NS, { home });
  t.after(() => brain.stop());
  const lan = await runTool('ip', ['netns', 'exec', NS, process.execPath, SVC, '--url', `http://127.0.0.1:${brain.port}`, 'access', 'lan'], { env: { ...process.env, SVC_HOME: home, SVC_API_TOKEN: '' } });
  assert.equal(lan.code, 0, lan.stderr);

  const base = `http://${BRAIN_V4}:${brain.port}`;
  const admin = { authorization: `Bearer ${readFileSync(join(home, 'api-token'), 'utf8').trim()}` };
  const qr = await fetch(`${base}/api/devices/pair/qr?kind=phone&name=Phone`, { headers: admin });
  assert.equal(qr.status, 200, await qr.clone().text());
  assert.equal(qr.headers.get('content-type'), 'image/png');
  const png = join(home, 'qr.png');
  writeFileSync(png, Buffer.from(await qr.arrayBuffer()));
  const payload = parsePairUrl((await runToolOk('zbarimg', ['--raw', '-q', png])).stdout.trim());
  assert.ok(payload.urls.includes(base), `the pair URL lists the brain's address on the link: ${payload.urls.join(', ')}`);
  assert.equal(payload.kind, 'phone');

  const done = await fetch(`${base}/api/devices/pair/complete`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: payload.token }) });
  assert.equal(done.status, 201);
  const device = (await done.json()) as CompletePairResponse;
  assert.equal(device.brain_id, payload.brain_id);
  const key = { authorization: `Bearer ${device.device_key}` };
  assert.equal((await fetch(`${base}/api/approvals`, { headers: key })).status, 200);
  assert.equal((await fetch(`${base}/api/devices/paired`, { headers: key })).status, 403);

  const ws = new WebSocket(`ws://${BRAIN_V4}:${brain.port}/v1/session`, ['svc.v1', `svc.bearer.${device.device_key}`]);
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  const opened = new Promise<void>((resolve) => ws.on('message', (d: Buffer) => (JSON.parse(d.toString()) as { type: string }).type === 'session_opened' && resolve()));
  await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
  ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  await opened;

  const revoked = await fetch(`${base}/api/devices/${device.device_id}`, { method: 'DELETE', headers: admin });
  assert.equal(revoked.status, 200);
  assert.equal(await closed, 4001);
  assert.equal((await fetch(`${base}/api/approvals`, { headers: key })).status, 401);
});
