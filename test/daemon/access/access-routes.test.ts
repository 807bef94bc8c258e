// /api/access on a whole brain in-process: admin only, the status shape, a change to the mode it is
// in answers the status and changes nothing, and a pinned listen address refuses a change with the fix.
// (Moving to lan binds 0.0.0.0, so that is tested inside a network namespace: test/e2e/access-netns.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { AccessStatus } from '../../../protocol/access';
import { inProcessBrain } from '../../helpers/assembled-brain';

void test('GET /api/access/status needs the admin token and answers the localhost mode by default', async (t) => {
  const { brain, token, home } = await inProcessBrain(t);
  assert.equal((await brain.app.inject({ method: 'GET', url: '/api/access/status' })).statusCode, 401);
  assert.equal((await brain.app.inject({ method: 'POST', url: '/api/access/lan' })).statusCode, 401);
  const r = await brain.app.inject({ method: 'GET', url: '/api/access/status', headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.statusCode, 200);
  const status = r.json<AccessStatus>();
  assert.ok(Value.Check(AccessStatus, status));
  assert.deepEqual([status.mode, status.listener, status.pinned_host, status.urls, status.tunnel.state], ['localhost', 'localhost', null, [], 'off']);
  assert.deepEqual(status.listening.map((a) => a.host), ['127.0.0.1', '::1']);
  const same = await brain.app.inject({ method: 'POST', url: '/api/access/localhost', headers: { authorization: `Bearer ${token}` } });
  assert.equal(same.statusCode, 200);
  assert.equal(same.json<AccessStatus>().mode, 'localhost');
  assert.ok(!existsSync(join(home, 'settings.json')), 'nothing to write for the mode it is in');
  const down = await brain.app.inject({ method: 'POST', url: '/api/access/remote-down', headers: { authorization: `Bearer ${token}` } });
  assert.equal(down.json<AccessStatus>().mode, 'localhost', 'remote-down when not remote changes nothing');
});

void test('a listen address pinned by server.host: the mode follows it, and a change is a 409 saying how to unpin', async (t) => {
  const { brain, token } = await inProcessBrain(t, { file: { server: { host: '::1', port: 0 } } });
  const auth = { authorization: `Bearer ${token}` };
  const status = (await brain.app.inject({ method: 'GET', url: '/api/access/status', headers: auth })).json<AccessStatus>();
  assert.deepEqual([status.mode, status.pinned_host, status.listening.map((a) => a.host)], ['localhost', '::1', ['::1']]);
  const r = await brain.app.inject({ method: 'POST', url: '/api/access/lan', headers: auth });
  assert.equal(r.statusCode, 409);
  const body = r.json<{ error: { code: string; message: string; details: { pinned_host: string; fix: string } } }>();
  assert.equal(body.error.code, 'CONFLICT');
  assert.equal(body.error.details.pinned_host, '::1');
  assert.match(body.error.details.fix, /remove server\.host.*SVC_HOST.*--host.*svc access lan/);
});
