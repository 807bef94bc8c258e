// Pairing on the built brain over loopback (issue 13, docs/pairing.md), black box: the pair URL is a
// 409 naming `svc access lan` while the brain is loopback-only; a token minted with the API token is
// completed by the "device", whose key opens /v1/session and approvals but gets 403 from admin routes;
// the key survives a restart; revoke answers 401 at once and closes the device's open WebSocket (4001);
// two racing claims give one credential; the node code flow; every bad input of the issue.
// (The QR code read by zbarimg from another network namespace: pairing-netns.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import type { CompletePairResponse, MintedPair } from '../../protocol/pairing';
import { rmSync } from 'node:fs';

const json = { 'content-type': 'application/json' };
const anonPost = (brain: BrainProcess, path: string, body: unknown): Promise<Response> => fetch(`${brain.url}${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
const mint = async (brain: BrainProcess, body: unknown = {}): Promise<MintedPair> => {
  const r = await brain.api('/api/devices/pair', { method: 'POST', body: JSON.stringify(body) });
  assert.equal(r.status, 201);
  return (await r.json()) as MintedPair;
};
const errorOf = async (r: Response): Promise<{ code: string; message: string; details: unknown }> => ((await r.json()) as { error: { code: string; message: string; details: unknown } }).error;

function socket(brain: BrainProcess, key: string): Promise<{ ws: WebSocket; closed: Promise<number>; opened: Promise<unknown> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${brain.port}/v1/session`, ['svc.v1', `svc.bearer.${key}`]);
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  const opened = new Promise((resolve) => ws.on('message', (d: Buffer) => (JSON.parse(d.toString()) as { type: string }).type === 'session_opened' && resolve(true)));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, closed, opened }));
    ws.once('unexpected-response', (_q, res) => reject(new Error(`upgrade refused ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

void test('mint → complete → the device key works on /v1/session and approvals, 403 on admin routes, survives a restart; revoke → 401 and the socket closed', { timeout: 60_000 }, async (t) => {
  const home = tempHome();
  t.after(() => rmSync(home, { recursive: true, force: true }));
  let brain = await startBrain({ home, keepHome: true });
  t.after(() => brain.stop());

  const url = await brain.api('/api/devices/pair/url');
  assert.equal(url.status, 409);
  assert.deepEqual((await errorOf(url)).details, { mode: 'localhost', command: 'svc access lan' });

  const minted = await mint(brain, { kind: 'browser', name: 'Laptop' });
  const check = await fetch(`${brain.url}/api/devices/pair/check?token=${minted.token}`);
  assert.deepEqual(await check.json(), { state: 'unclaimed', kind: 'browser', pin_required: false, pin_verified: false, expires_at: minted.expires_at });
  const done = await anonPost(brain, '/api/devices/pair/complete', { token: minted.token });
  assert.equal(done.status, 201);
  const device = (await done.json()) as CompletePairResponse;
  const as = { authorization: `Bearer ${device.device_key}` };
  assert.equal((await fetch(`${brain.url}/api/approvals`, { headers: as })).status, 200);
  const admin = await fetch(`${brain.url}/api/devices/paired`, { headers: as });
  assert.equal(admin.status, 403);
  assert.equal((await errorOf(admin)).code, 'FORBIDDEN');
  assert.equal((await fetch(`${brain.url}/api/devices/pair`, { method: 'POST', headers: { ...as, ...json }, body: '{}' })).status, 403, 'a device cannot mint tokens');
  const s = await socket(brain, device.device_key);
  s.ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  await s.opened;
  s.ws.close();
  await s.closed;

  await brain.stop();
  brain = await startBrain({ home, keepHome: true });
  assert.equal((await fetch(`${brain.url}/api/approvals`, { headers: as })).status, 200, 'a paired device stays paired across a restart');
  const live = await socket(brain, device.device_key);
  const revoked = await brain.api(`/api/devices/${device.device_id}`, { method: 'DELETE' });
  assert.deepEqual(await revoked.json(), { id: device.device_id, revoked: true, connections_closed: 1 });
  assert.equal(await live.closed, 4001);
  const after = await fetch(`${brain.url}/api/approvals`, { headers: as });
  assert.equal(after.status, 401);
  await assert.rejects(socket(brain, device.device_key), /401/);
  assert.equal((await brain.api(`/api/devices/${device.device_id}`, { method: 'DELETE' })).status, 404);
});

void test('bad tokens: unknown 404, reused and revoked and expired 409 with the state; PIN refusals; two racing claims give exactly one credential', { timeout: 60_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  const unknown = await anonPost(brain, '/api/devices/pair/complete', { token: `svcpt_${'x'.repeat(43)}` });
  assert.equal(unknown.status, 404);
  assert.equal((await fetch(`${brain.url}/api/devices/pair/check?token=nope`)).status, 404);

  for (let round = 0; round < 3; round++) {
    const { token } = await mint(brain);
    const results = await Promise.all(Array.from({ length: 4 }, () => anonPost(brain, '/api/devices/pair/complete', { token })));
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 409, 409, 409]);
  }
  const revokedToken = await mint(brain);
  assert.equal((await brain.api(`/api/devices/${revokedToken.pair_id}`, { method: 'DELETE' })).status, 200);
  assert.deepEqual((await errorOf(await anonPost(brain, '/api/devices/pair/complete', { token: revokedToken.token }))).details, { state: 'revoked' });

  const pinned = await mint(brain, { pin: true });
  assert.equal((await anonPost(brain, '/api/devices/pair/complete', { token: pinned.token })).status, 401, 'a required PIN is not verified yet');
  const wrong = pinned.pin === '000000' ? '000001' : '000000';
  const statuses = [];
  for (let i = 0; i < 6; i++) statuses.push((await anonPost(brain, '/api/devices/pair/verify_pin', { token: pinned.token, pin: wrong })).status);
  assert.deepEqual(statuses, [401, 401, 401, 401, 401, 409]);
  assert.equal((await anonPost(brain, '/api/devices/pair/verify_pin', { token: pinned.token, pin: pinned.pin })).status, 409, 'revoked after the 5th wrong PIN');
  assert.equal((await anonPost(brain, '/api/devices/pair/complete', { token: pinned.token })).status, 409);

  const pruned = await brain.api('/api/devices/pair/prune', { method: 'POST', body: JSON.stringify({ older_than_seconds: 0 }) });
  assert.equal(pruned.status, 200);
  assert.equal(((await pruned.json()) as { revoked: number }).revoked, 0, 'every token is claimed or revoked by now');
});

void test('node code flow: announce, poll pending, claim with the API token, the poll gets the node key (403 on /v1/session and approvals); wrong claims end in 429 with Retry-After', { timeout: 60_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  assert.equal((await anonPost(brain, '/api/devices/pair/announce', { code: '305 118', node_id: 'rpi-garden', name: 'Garden' })).status, 200);
  const poll = async () => (await fetch(`${brain.url}/api/devices/pair/status?code=305118&node_id=rpi-garden`)).json() as Promise<{ status: string; token?: string }>;
  assert.equal((await poll()).status, 'pending');
  const claim = await brain.api('/api/devices/pair/code/claim', { method: 'POST', body: JSON.stringify({ code: '305118' }) });
  assert.equal(claim.status, 200);
  const paired = await poll();
  assert.equal(paired.status, 'paired');
  const nodeKey = paired.token!;
  assert.equal((await fetch(`${brain.url}/api/approvals`, { headers: { authorization: `Bearer ${nodeKey}` } })).status, 403);
  await assert.rejects(socket(brain, nodeKey), /403/);
  const list = (await (await brain.api('/api/devices/paired')).json()) as { devices: { kind: string; node_id: string }[] };
  assert.deepEqual(list.devices.map((d) => [d.kind, d.node_id]), [['node', 'rpi-garden']]);

  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await brain.api('/api/devices/pair/code/claim', { method: 'POST', body: JSON.stringify({ code: `99999${i}` }) })).status);
  assert.deepEqual(statuses, [404, 404, 404, 404, 404, 429]);
  const limited = await brain.api('/api/devices/pair/code/claim', { method: 'POST', body: JSON.stringify({ code: '305118' }) });
  assert.equal(limited.status, 429);
  assert.match(limited.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
});

void test('oversized and malformed fields of every pairing endpoint: 400 in the envelope, nothing minted', { timeout: 60_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  const big = 'x'.repeat(10_000);
  const cases: [string, string, unknown, boolean][] = [
    ['POST', '/api/devices/pair', { name: big }, true],
    ['POST', '/api/devices/pair', { node_id: big, kind: 'node' }, true],
    ['POST', '/api/devices/pair', { pin: '1'.repeat(9) }, true],
    ['POST', '/api/devices/pair', { kind: 'phone', unexpected: true }, true],
    ['GET', `/api/devices/pair/url?name=${big}`, undefined, true],
    ['GET', '/api/devices/pair/qr?format=gif', undefined, true],
    ['GET', `/api/devices/pair/check?token=${big}`, undefined, false],
    ['POST', '/api/devices/pair/verify_pin', { token: big, pin: '1234' }, false],
    ['POST', '/api/devices/pair/complete', { token: big }, false],
    ['POST', '/api/devices/pair/complete', { token: 'svcpt_x', name: big }, false],
    ['POST', '/api/devices/pair/announce', { code: big, node_id: 'n' }, false],
    ['GET', '/api/devices/pair/status?code=1&node_id=n', undefined, false],
    ['POST', '/api/devices/pair/code/claim', { code: big }, true],
    ['POST', '/api/devices/pair/prune', { older_than_seconds: -1 }, true],
    ['POST', '/api/devices/handoff', { session_id: big, from_device_id: 'a', to_device_id: 'b' }, true],
  ];
  for (const [method, path, body, admin] of cases) {
    const init: RequestInit = { method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: json }) };
    const r = admin ? await brain.api(path, init) : await fetch(`${brain.url}${path}`, init);
    assert.equal(r.status, 400, `${method} ${path.slice(0, 60)}`);
    assert.equal((await errorOf(r)).code, 'BAD_REQUEST');
  }
  const list = (await (await brain.api('/api/devices/paired?include_unclaimed=true')).json()) as { unclaimed: unknown[] };
  assert.deepEqual(list.unclaimed, []);
});
