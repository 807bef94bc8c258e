// The pairing capability in an assembled brain listening on loopback (real HTTP and WebSockets): the QR
// PNG decoded by zbarimg completes pairing from the URL it carries; the device key opens /v1/session and
// approvals and is refused (403) on admin routes; revoke closes its socket (4001) and answers 401; a
// handoff moves a live session between two paired devices; the code flow with its 429.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { inProcessBrain } from '../../helpers/assembled-brain';
import { runToolOk } from '../../helpers/external-tools';
import { parsePairUrl } from '../../../mesh/pair-payload';
import type { BrainMessage } from '../../../protocol/session';
import type { CompletePairResponse } from '../../../protocol/pairing';

async function brainOnLoopback(t: Parameters<typeof inProcessBrain>[0]) {
  const b = await inProcessBrain(t);
  const port = (b.brain.app.server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;
  const api = (path: string, init: RequestInit & { key?: string } = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), authorization: `Bearer ${init.key ?? b.token}`, ...(init.headers as Record<string, string> | undefined) } });
  const anon = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, { ...init, headers: { ...(init.body ? { 'content-type': 'application/json' } : {}) } });
  return { ...b, port, base, api, anon };
}

interface Socket {
  ws: WebSocket;
  frames: BrainMessage[];
  waitFor(type: string, from?: number): Promise<BrainMessage>;
  closed: Promise<number>;
}

function openSession(port: number, key: string): Promise<Socket> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/session`, ['svc.v1', `svc.bearer.${key}`]);
  const frames: BrainMessage[] = [];
  const listeners: (() => void)[] = [];
  ws.on('message', (d: Buffer) => {
    frames.push(JSON.parse(d.toString('utf8')) as BrainMessage);
    for (const l of [...listeners]) l();
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  const waitFor = (type: string, from = 0) =>
    new Promise<BrainMessage>((resolve) => {
      const check = (): boolean => {
        const hit = frames.slice(from).find((f) => f.type === type);
        if (hit) resolve(hit);
        return hit !== undefined;
      };
      if (!check()) listeners.push(() => void check());
    });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, frames, waitFor, closed }));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

void test('QR → zbarimg → complete from the URL → the device key works on /v1/session and approvals, 403 on admin routes; revoke → 401 and its socket closed with 4001', { timeout: 30_000 }, async (t) => {
  const b = await brainOnLoopback(t);
  const refused = await b.api('/api/devices/pair/qr');
  assert.equal(refused.status, 409);
  assert.equal(((await refused.json()) as { error: { details: { command: string } } }).error.details.command, 'svc access lan');
  // What the access capability announces once the brain listens beyond loopback.
  b.brain.bus.emit({ type: 'access_mode', mode: 'lan', urls: [b.base], at: Date.now() / 1000 });

  const qr = await b.api('/api/devices/pair/qr?kind=phone&name=Kitchen%20tablet');
  assert.equal(qr.status, 200);
  assert.equal(qr.headers.get('content-type'), 'image/png');
  assert.equal(qr.headers.get('cache-control'), 'no-store');
  const dir = mkdtempSync(join(tmpdir(), 'svc-qr-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'pair.png'), Buffer.from(await qr.arrayBuffer()));
  const decoded = (await runToolOk('zbarimg', ['--raw', '-q', join(dir, 'pair.png')])).stdout.trim();
  const payload = parsePairUrl(decoded);
  assert.equal(payload.pin_required, false);
  assert.deepEqual(payload.urls, [b.base]);
  assert.equal(qr.headers.get('x-pair-id') !== null, true);

  const check = await fetch(`${payload.urls[0]!}/api/devices/pair/check?token=${payload.token}`);
  assert.equal(((await check.json()) as { state: string }).state, 'unclaimed');
  const done = await fetch(`${payload.urls[0]!}/api/devices/pair/complete`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: payload.token, platform: 'android' }) });
  assert.equal(done.status, 201);
  const device = (await done.json()) as CompletePairResponse;
  assert.equal(device.name, 'Kitchen tablet');
  const reused = await b.anon('/api/devices/pair/complete', { method: 'POST', body: JSON.stringify({ token: payload.token }) });
  assert.equal(reused.status, 409);

  const s = await openSession(b.port, device.device_key);
  s.ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  assert.equal((await s.waitFor('session_opened')).type, 'session_opened');
  assert.equal((await b.api('/api/approvals', { key: device.device_key })).status, 200);
  const admin = await b.api('/api/devices/paired', { key: device.device_key });
  assert.equal(admin.status, 403);
  assert.equal((await b.api('/api/memory/notes', { key: device.device_key })).status, 403);
  const listed = (await (await b.api('/api/devices/paired')).json()) as { devices: { device_id: string; connections: number }[] };
  assert.deepEqual(listed.devices.map((d) => [d.device_id, d.connections]), [[device.device_id, 1]]);

  const revoked = await b.api(`/api/devices/${device.device_id}`, { method: 'DELETE' });
  assert.deepEqual(await revoked.json(), { id: device.device_id, revoked: true, connections_closed: 1 });
  assert.equal(await s.closed, 4001);
  assert.equal((await b.api('/api/approvals', { key: device.device_key })).status, 401);
  await assert.rejects(openSession(b.port, device.device_key), /401/);
});

async function pairPhone(b: Awaited<ReturnType<typeof brainOnLoopback>>, kind = 'phone'): Promise<CompletePairResponse> {
  const minted = (await (await b.api('/api/devices/pair', { method: 'POST', body: JSON.stringify({ kind }) })).json()) as { token: string };
  return (await (await b.anon('/api/devices/pair/complete', { method: 'POST', body: JSON.stringify({ token: minted.token }) })).json()) as CompletePairResponse;
}

void test('handoff: the target device\'s socket joins the session with its history, the source is detached (handed_off)', { timeout: 30_000 }, async (t) => {
  const b = await brainOnLoopback(t);
  const phone = await pairPhone(b);
  const laptop = await pairPhone(b, 'browser');
  const from = await openSession(b.port, phone.device_key);
  const to = await openSession(b.port, laptop.device_key);
  from.ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  const opened = await from.waitFor('session_opened');
  const body = { session_id: opened.session_id, from_device_id: phone.device_id, to_device_id: laptop.device_id };
  const moved = await b.api('/api/devices/handoff', { method: 'POST', body: JSON.stringify(body), key: phone.device_key });
  assert.equal(moved.status, 200, await moved.clone().text());
  assert.deepEqual(await moved.json(), { session_id: opened.session_id, attached: 1, detached: 1 });
  const joined = await to.waitFor('session_opened');
  assert.equal(joined.session_id, opened.session_id);
  assert.ok(Array.isArray((joined.payload as { history: unknown[] }).history));
  const left = await from.waitFor('session_closed');
  assert.deepEqual(left.payload, { reason: 'handed_off', episode_id: null });
  const notMine = await b.api('/api/devices/handoff', { method: 'POST', body: JSON.stringify(body), key: laptop.device_key });
  assert.equal(notMine.status, 403);
  from.ws.close();
  to.ws.close();
});

void test('code flow: announce → pending → claim → the node\'s poll gets its node key (a node principal: 403 on /v1/session); 6th wrong claim in 15 min is 429 with Retry-After', { timeout: 30_000 }, async (t) => {
  const b = await brainOnLoopback(t);
  const announce = await b.anon('/api/devices/pair/announce', { method: 'POST', body: JSON.stringify({ code: '042 917', node_id: 'esp32-porch', name: 'Porch', extra: 'ignored' }) });
  assert.equal(announce.status, 200, await announce.clone().text());
  const poll = () => b.anon('/api/devices/pair/status?code=042917&node_id=esp32-porch');
  assert.equal(((await (await poll()).json()) as { status: string }).status, 'pending');
  assert.equal((await b.anon('/api/devices/pair/status?code=042917&node_id=other')).status, 404);
  assert.equal((await b.anon('/api/devices/pair/code/claim', { method: 'POST', body: JSON.stringify({ code: '042917' }) })).status, 401, 'claiming needs the API token');
  const claim = await b.api('/api/devices/pair/code/claim', { method: 'POST', body: JSON.stringify({ code: '042-917' }) });
  assert.equal(claim.status, 200, await claim.clone().text());
  const status = (await (await poll()).json()) as { status: string; token: string };
  assert.equal(status.status, 'paired');
  assert.equal((await b.api('/api/approvals', { key: status.token })).status, 403, 'a node key is not a phone');
  await assert.rejects(openSession(b.port, status.token), /403/);
  assert.equal((await b.api('/api/devices/pair/code/claim', { method: 'POST', body: JSON.stringify({ code: '042917' }) })).status, 409);

  for (let i = 0; i < 5; i++) assert.equal((await b.api('/api/devices/pair/code/claim', { method: 'POST', body: JSON.stringify({ code: `00000${i}` }) })).status, 404);
  const limited = await b.api('/api/devices/pair/code/claim', { method: 'POST', body: JSON.stringify({ code: '000009' }) });
  assert.equal(limited.status, 429);
  assert.match(limited.headers.get('retry-after') ?? '', /^\d+$/);
  assert.ok(Number(limited.headers.get('retry-after')) > 0 && Number(limited.headers.get('retry-after')) <= 900);
});

void test('bad input: oversized and malformed fields are 400s in the envelope; PIN attempts per caller are limited (429)', { timeout: 30_000 }, async (t) => {
  const b = await brainOnLoopback(t);
  const post = (path: string, body: unknown, anon = false) => (anon ? b.anon : b.api)(path, { method: 'POST', body: JSON.stringify(body) });
  for (const [path, body, anon] of [
    ['/api/devices/pair', { name: 'x'.repeat(65) }, false],
    ['/api/devices/pair', { kind: 'toaster' }, false],
    ['/api/devices/pair', { pin: '12' }, false],
    ['/api/devices/pair', { ttl_seconds: 10 }, false],
    ['/api/devices/pair', { node_id: 'a b' }, false],
    ['/api/devices/pair/complete', { token: 'x'.repeat(65) }, true],
    ['/api/devices/pair/complete', { token: 'svcpt_ok', name: 'n\u0000' }, true],
    ['/api/devices/pair/verify_pin', { token: 'svcpt_x', pin: '1'.repeat(17) }, true],
    ['/api/devices/pair/announce', { code: '12345', node_id: 'n' }, true],
    ['/api/devices/pair/announce', { code: '123456', node_id: 'x'.repeat(129) }, true],
    ['/api/devices/handoff', { session_id: 's' }, false],
  ] as const) {
    const res = await post(path, body, anon);
    assert.equal(res.status, 400, `${path} ${JSON.stringify(body).slice(0, 80)}: ${res.status}`);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'BAD_REQUEST');
  }
  const pinned = (await (await post('/api/devices/pair', { pin: '1234' })).json()) as { token: string };
  const statuses: number[] = [];
  for (let i = 0; i < 11; i++) statuses.push((await post('/api/devices/pair/verify_pin', { token: pinned.token, pin: '9999' }, true)).status);
  assert.deepEqual(statuses, [401, 401, 401, 401, 401, 409, 409, 409, 409, 409, 429]);
  assert.equal((await b.anon(`/api/devices/pair/check?token=${pinned.token}`).then((r) => r.json()) as { state: string }).state, 'revoked');
});

void test('the pair URL follows the bus: access_mode sets the URLs, mdns_advertised adds the mDNS name, mdns_withdrawn removes it', async (t) => {
  const b = await brainOnLoopback(t);
  const payload = async () => ((await (await b.api('/api/devices/pair/url')).json()) as { payload: { urls: string[]; mdns: string | null } }).payload;
  b.brain.bus.emit({ type: 'access_mode', mode: 'lan', urls: ['http://192.0.2.7:9090'], at: 0 });
  b.brain.bus.emit({ type: 'mdns_advertised', host: 'pi.local', port: 9090, at: 0 });
  const lan = await payload();
  assert.deepEqual([lan.urls, lan.mdns], [['http://192.0.2.7:9090'], 'pi.local:9090']);
  b.brain.bus.emit({ type: 'mdns_withdrawn', at: 0 });
  assert.equal((await payload()).mdns, null);
  b.brain.bus.emit({ type: 'access_mode', mode: 'localhost', urls: [], at: 0 });
  assert.equal((await b.api('/api/devices/pair/url')).status, 409);
});
