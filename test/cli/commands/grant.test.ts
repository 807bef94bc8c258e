// svc grant against a loopback HTTP server that records the requests and answers like /api/grants:
// relative paths are resolved from the working directory, flags become the body, refusals print the
// brain's message and exit 1, and list prints a table, an empty hint or JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantAdd, grantList, grantRevoke } from '../../../cli/commands/grant';
import { fakeBrain, io } from '../../helpers/cli-rig';

const grant = { path: '/home/pi/docs', mode: 'write', expires_at: '2026-01-01T02:00:00.000Z', created_at: '2026-01-01T00:00:00.000Z' };

void test('svc grant add resolves a relative path and sends --write and --for', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [201, grant]);
  const { io: cli, text } = io();
  assert.equal(await grantAdd(conn, cli, { path: 'docs', write: true, for: '2h', cwd: '/home/pi' }), 0);
  assert.deepEqual(seen, [{ method: 'POST', url: '/api/grants', body: { path: '/home/pi/docs', write: true, for: '2h' } }]);
  assert.equal(text.out, 'granted read and write access to /home/pi/docs until 2026-01-01T02:00:00.000Z\n');
  await grantAdd(conn, cli, { path: '/srv', write: false, cwd: '/' });
  assert.deepEqual(seen[1]!.body, { path: '/srv' }, 'read only and no expiry are left to the defaults');
});

void test('svc grant add prints the refusal and exits 1', async (t) => {
  const { conn } = await fakeBrain(t, () => [400, { error: { code: 'BAD_REQUEST', message: '/nope: does not exist', details: null } }]);
  const { io: cli, text } = io();
  assert.equal(await grantAdd(conn, cli, { path: '/nope', write: false, cwd: '/' }), 1);
  assert.equal(text.err, 'svc: /nope: does not exist\n');
});

void test('svc grant revoke and list', async (t) => {
  let grants: unknown[] = [grant];
  const { conn, seen } = await fakeBrain(t, (s) => (s.method === 'DELETE' ? ((grants = []), [200, { revoked: grant }]) : [200, { grants }]));
  const { io: cli, text } = io();
  assert.equal(await grantList(conn, cli, { json: false }), 0);
  assert.match(text.out, /^PATH\s+MODE\s+EXPIRES\n\/home\/pi\/docs\s+write\s+2026-01-01T02:00:00.000Z\n$/);
  assert.equal(await grantRevoke(conn, cli, { path: 'docs', cwd: '/home/pi' }), 0);
  assert.deepEqual(seen[1], { method: 'DELETE', url: '/api/grants', body: { path: '/home/pi/docs' } });
  text.out = '';
  await grantList(conn, cli, { json: false });
  assert.match(text.out, /no folders granted/);
  text.out = '';
  await grantList(conn, cli, { json: true });
  assert.equal(text.out, '[]\n');
});
