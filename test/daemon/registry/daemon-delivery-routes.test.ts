// The delivery routes in a fastify app with a node verifier: a node key sees its own daemon (null when
// none), downloads the bundle whose sha256 the offer named (and the header says), reports its state;
// the admin token is refused on the node routes and a node key on the admin list; a bad report is a
// 400; the admin sees the report. The registry capability mounts them, registry enabled or not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { daemonDeliveries, deliveryRoutes, BUNDLE_HEADERS } from '../../../daemon/registry/daemon-delivery-routes';
import { DAEMON_MIGRATIONS, DAEMONS_COMPONENT } from '../../../daemon/registry/registry-capability';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import type { Principal } from '../../../daemon/auth/principal';
import type { DaemonDeliveryList, DaemonOffer, MyDaemon } from '../../../protocol/daemons';
import { DEFAULT_ARCHIVE_LIMITS, extractArchive, packArchive } from '../../../signing/archive';
import { daemonFiles } from '../../helpers/registry-bundles';
import { auth, testApp } from '../../helpers/app';
import { registryCapability } from '../../../daemon/registry/registry-capability';
import { inProcessBrain } from '../../helpers/assembled-brain';

const KEYS: Record<string, Principal> = { 'node-garden': { kind: 'node', id: 'rpi-garden' }, 'node-hall': { kind: 'node', id: 'rpi-hall' }, 'phone-1': { kind: 'device', id: 'dev_1', deviceKind: 'phone', scopes: [] } };
const as = (key: string) => ({ authorization: `Bearer ${key}` });

async function rig(t: { after(fn: () => void): void }) {
  const home = mkdtempSync(join(tmpdir(), 'svc-delivery-routes-'));
  const store = new SqliteStore(join(home, 'brain.db'));
  store.migrate(DAEMONS_COMPONENT, DAEMON_MIGRATIONS);
  t.after(() => {
    store.close();
    rmSync(home, { recursive: true, force: true });
  });
  const archive = packArchive(daemonFiles('rpi-garden', '1.0.0'));
  const path = join(home, 'daemons', 'rpi-garden', '1.0.0');
  await extractArchive(archive, path);
  await store.write((db) =>
    db.run('INSERT INTO installed_daemons (node_id, version, entry, display_name, sha256, key_id, source, installed_at, path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', ['rpi-garden', '1.0.0', 'bin/daemon.js', 'Garden pump', 'a'.repeat(64), 'k', 'http://x', '2026-01-01T00:00:00.000Z', path]),
  );
  const deliveries = daemonDeliveries({ store, clock: { now: () => Date.UTC(2026, 0, 2) } }, DEFAULT_ARCHIVE_LIMITS);
  const { app } = await testApp({ routes: [deliveryRoutes(deliveries) as unknown as FastifyPluginAsync], verifiers: [{ verify: (c) => KEYS[c.token] }] });
  t.after(() => void app.close());
  return { app, archive };
}

void test('a node sees its own daemon, downloads the bundle the offer names and reports; another node sees none', async (t) => {
  const { app, archive } = await rig(t);
  const mine = await app.inject({ url: '/api/daemons/mine', headers: as('node-garden') });
  assert.equal(mine.statusCode, 200, mine.body);
  const offer = mine.json<MyDaemon>().daemon as DaemonOffer;
  assert.equal(offer.version, '1.0.0');
  assert.equal(offer.entry, 'bin/daemon.js');
  assert.equal(offer.sha256, createHash('sha256').update(archive).digest('hex'), 'packArchive bytes come back unchanged');
  const bundle = await app.inject({ url: '/api/daemons/mine/bundle', headers: as('node-garden') });
  assert.equal(bundle.statusCode, 200);
  assert.equal(bundle.headers['content-type'], 'application/gzip');
  assert.equal(bundle.headers[BUNDLE_HEADERS.sha256], offer.sha256);
  assert.equal(bundle.headers[BUNDLE_HEADERS.version], '1.0.0');
  assert.equal(createHash('sha256').update(bundle.rawPayload).digest('hex'), offer.sha256);
  assert.equal(bundle.rawPayload.length, offer.size);
  assert.deepEqual((await app.inject({ url: '/api/daemons/mine', headers: as('node-hall') })).json(), { daemon: null });
  assert.equal((await app.inject({ url: '/api/daemons/mine/bundle', headers: as('node-hall') })).statusCode, 404);

  const report = await app.inject({ method: 'POST', url: '/api/daemons/mine/status', headers: as('node-garden'), payload: { version: '1.0.0', state: 'installed' } });
  assert.equal(report.statusCode, 200, report.body);
  const list = (await app.inject({ url: '/api/daemons/delivery', headers: auth })).json<DaemonDeliveryList>();
  assert.equal(list.deliveries[0]!.state, 'installed');
  assert.equal((await app.inject({ method: 'POST', url: '/api/daemons/mine/status', headers: as('node-hall'), payload: { version: '1.0.0', state: 'installed' } })).statusCode, 404);
});

void test('who may ask: the admin and a phone are refused on the node routes, a node on the admin list; bad reports are 400', async (t) => {
  const { app } = await rig(t);
  for (const url of ['/api/daemons/mine', '/api/daemons/mine/bundle']) {
    assert.equal((await app.inject({ url, headers: auth })).statusCode, 403, url);
    assert.equal((await app.inject({ url, headers: as('phone-1') })).statusCode, 403, url);
    assert.equal((await app.inject({ url })).statusCode, 401, url);
  }
  assert.equal((await app.inject({ url: '/api/daemons/delivery', headers: as('node-garden') })).statusCode, 403);
  for (const payload of [{ version: '1.0.0', state: 'exploded' }, { version: 'one', state: 'installed' }, { version: '1.0.0', state: 'failed', error: 'x'.repeat(2001) }, { version: '1.0.0', state: 'installed', extra: 1 }]) {
    const r = await app.inject({ method: 'POST', url: '/api/daemons/mine/status', headers: as('node-garden'), payload });
    assert.equal(r.statusCode, 400, JSON.stringify(payload));
    assert.equal(r.json<{ error: { code: string } }>().error.code, 'BAD_REQUEST');
  }
});

void test('the registry capability mounts the delivery routes, with the registry off', async (t) => {
  const { brain, token } = await inProcessBrain(t, { capabilities: [registryCapability] });
  const list = await brain.app.inject({ url: '/api/daemons/delivery', headers: { authorization: `Bearer ${token}` } });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(list.json(), { deliveries: [] });
  assert.equal((await brain.app.inject({ url: '/api/daemons/mine', headers: { authorization: `Bearer ${token}` } })).statusCode, 403, 'the admin has no daemon of its own');
});
