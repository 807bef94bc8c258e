// The routes with app.inject(): who may call what (public for the unpaired device's calls, the API
// token for the rest), status codes, and Retry-After on a 429.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pairingRoutes } from '../../../daemon/pairing/pairing-routes';
import { CodePairing } from '../../../daemon/pairing/code-pairing';
import { testApp, auth } from '../../helpers/app';
import { pairingRig } from './pairing-rig';

void test('admin routes need the API token; the unpaired device\'s routes need none', async (t) => {
  const rig = pairingRig(t);
  const { app } = await testApp({ routes: [pairingRoutes(rig.pairing, new CodePairing(rig.pairing, rig.clock), rig.clock)], verifiers: [rig.credentials] });
  t.after(() => app.close());
  for (const [method, url] of [['POST', '/api/devices/pair'], ['GET', '/api/devices/pair/url'], ['GET', '/api/devices/pair/qr'], ['GET', '/api/devices/paired'], ['POST', '/api/devices/pair/prune'], ['DELETE', '/api/devices/dev_x'], ['POST', '/api/devices/pair/code/claim'], ['POST', '/api/devices/handoff']] as const) {
    assert.equal((await app.inject({ method, url })).statusCode, 401, `${method} ${url}`);
  }
  const minted = await app.inject({ method: 'POST', url: '/api/devices/pair', headers: auth, payload: { kind: 'browser', pin: true } });
  assert.equal(minted.statusCode, 201);
  const { token, pin } = minted.json<{ token: string; pin: string }>();
  assert.equal((await app.inject({ method: 'GET', url: `/api/devices/pair/check?token=${token}` })).json<{ pin_required: boolean }>().pin_required, true);
  assert.equal((await app.inject({ method: 'POST', url: '/api/devices/pair/complete', payload: { token } })).statusCode, 401);
  assert.equal((await app.inject({ method: 'POST', url: '/api/devices/pair/verify_pin', payload: { token, pin } })).statusCode, 200);
  const done = await app.inject({ method: 'POST', url: '/api/devices/pair/complete', payload: { token } });
  assert.equal(done.statusCode, 201);
  const key = done.json<{ device_key: string }>().device_key;
  assert.equal((await app.inject({ method: 'GET', url: '/api/devices/paired', headers: { authorization: `Bearer ${key}` } })).statusCode, 403, 'a device key is not the admin token');
  assert.equal((await app.inject({ method: 'GET', url: '/api/devices/pair/url', headers: auth })).statusCode, 409);
  const empty = await app.inject({ method: 'POST', url: '/api/devices/pair', headers: auth });
  assert.equal(empty.statusCode, 201, 'no body: a phone token');
  const tooMany = [];
  for (let i = 0; i < 31; i++) tooMany.push((await app.inject({ method: 'POST', url: '/api/devices/pair/announce', payload: { code: String(i).padStart(6, '0'), node_id: `n${i}` } })).statusCode);
  assert.deepEqual([...new Set(tooMany.slice(0, 30))], [200]);
  const last = await app.inject({ method: 'POST', url: '/api/devices/pair/announce', payload: { code: '777777', node_id: 'x' } });
  assert.equal(last.statusCode, 429);
  assert.match(String(last.headers['retry-after']), /^\d+$/);
});
