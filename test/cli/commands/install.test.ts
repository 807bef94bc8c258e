// svc install against a loopback stand-in for both the registry and the brain: a skill goes to
// /api/skills/install and a daemon to /api/daemons/install with the registry's download URL, sha256
// and detached signature; an unknown name and an unreviewed item are exit 1 with what happened; a
// brain that does not trust the publisher names the command that would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { install } from '../../../cli/commands/install';
import { fakeBrain, io } from '../../helpers/cli-rig';

const SIG = { alg: 'ed25519', sha256: 'a'.repeat(64), key_id: 'k1', sig: 'S' };
const version = { submission_id: 's', version: '1.0.0', state: 'published', visibility: 'public', sha256: SIG.sha256, size: 1, key_id: 'k1', public_key: 'PUB', signature: SIG, reason: null, submitted_at: '', reviewed_at: '', download: '/registry/v1/items/x/download?version=1.0.0' };
const item = (kind: string, installable = true) => ({ id: 'u', kind, name: 'x', display_name: 'X', description: '', key_id: 'k1', installable, current: installable ? version : null, versions: [], manifest: null });
const args = { name: 'x', registry: undefined, json: false };

void test('a skill is installed by the brain from the registry download, with its sha256 and signature', async (t) => {
  const { conn, seen } = await fakeBrain(t, (s) => (s.method === 'GET' ? [200, item('skill')] : [201, { skill: { id: 'x' } }]));
  const { io: cli, text } = io();
  assert.equal(await install(cli, conn, args), 0, text.err);
  assert.deepEqual(seen.map((s) => [s.method, s.url]), [['GET', '/registry/v1/items/x'], ['POST', '/api/skills/install']]);
  assert.deepEqual(seen[1]!.body, { url: `${conn.url}${version.download}`, sha256: SIG.sha256, signature: SIG });
  assert.match(text.out, /installed skill x 1\.0\.0/);
});

void test('a daemon goes to /api/daemons/install', async (t) => {
  const { conn, seen } = await fakeBrain(t, (s) => (s.method === 'GET' ? [200, item('daemon')] : [201, {}]));
  assert.equal(await install(io().io, conn, args), 0);
  assert.equal(seen[1]!.url, '/api/daemons/install');
});

void test('unknown, unreviewed, and an untrusted publisher are exit 1 with what to do', async (t) => {
  const unknown = await fakeBrain(t, () => [404, { error: { code: 'NOT_FOUND', message: 'item "x" not found', details: { item: 'x' } } }]);
  const u = io();
  assert.equal(await install(u.io, unknown.conn, args), 1);
  assert.match(u.text.err, /no skill or daemon named "x"/);
  const early = await fakeBrain(t, () => [200, item('skill', false)]);
  const e = io();
  assert.equal(await install(e.io, early.conn, args), 1);
  assert.match(e.text.err, /not installable until reviewed/);
  assert.equal(early.seen.length, 1, 'the brain is not asked');
  const untrusted = await fakeBrain(t, (s) => (s.method === 'GET' ? [200, item('skill')] : [422, { error: 'UNVERIFIED_MANIFEST', reason: 'unknown_key', message: 'no publisher key is pinned for key id k1' }]));
  const n = io();
  assert.equal(await install(n.io, untrusted.conn, args), 1);
  assert.match(n.text.err, /refused \(unknown_key\): no publisher key is pinned/);
  assert.match(n.text.err, /svc publisher trust k1 PUB/);
});
