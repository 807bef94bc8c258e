// The delivery service on a real store, with a packer that counts its calls: no daemon is null; an
// installed one is offered with the sha256 and size of its bundle, hashed once per install and again
// after a new install; the bundle is packed afresh each time; reports are kept per node (the latest),
// refused when nothing is installed, and the admin's list says pending until the node reports about
// the installed version; missing files are a 404 that says to install again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DaemonDeliveries, DELIVERY_COMPONENT, DELIVERY_MIGRATIONS } from '../../../daemon/registry/daemon-delivery';
import { DAEMON_MIGRATIONS, DAEMONS_COMPONENT } from '../../../daemon/registry/registry-capability';
import { AppError } from '../../../daemon/kernel/errors';
import { SqliteStore } from '../../../daemon/store/sqlite-store';

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

function rig(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-delivery-'));
  const store = new SqliteStore(join(dir, 'brain.db'));
  store.migrate(DAEMONS_COMPONENT, DAEMON_MIGRATIONS);
  store.migrate(DELIVERY_COMPONENT, DELIVERY_MIGRATIONS);
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const packed: string[] = [];
  const contents = new Map<string, Uint8Array>();
  const pack = async (path: string): Promise<Uint8Array> => {
    packed.push(path);
    const bytes = contents.get(path);
    if (bytes === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return bytes;
  };
  const deliveries = new DaemonDeliveries(store, { now: () => Date.UTC(2026, 0, 2) }, pack, sha);
  const install = async (nodeId: string, version: string, bytes: Uint8Array, at = '2026-01-01T00:00:00.000Z'): Promise<void> => {
    const path = join(dir, 'daemons', nodeId, version);
    contents.set(path, bytes);
    await store.write((db) =>
      db.run('INSERT OR REPLACE INTO installed_daemons (node_id, version, entry, display_name, sha256, key_id, source, installed_at, path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [nodeId, version, 'main.js', 'Garden pump', 'a'.repeat(64), 'k', 'http://x', at, path]),
    );
  };
  return { deliveries, install, packed, contents, dir };
}

void test('no daemon installed: the offer is null and a bundle or a report is a 404', async (t) => {
  const { deliveries } = rig(t);
  assert.equal(await deliveries.offer('rpi-garden'), null);
  await assert.rejects(deliveries.bundle('rpi-garden'), (err: unknown) => err instanceof AppError && err.status === 404);
  await assert.rejects(deliveries.report('rpi-garden', { version: '1.0.0', state: 'installed' }), (err: unknown) => err instanceof AppError && err.status === 404);
  assert.deepEqual(deliveries.deliveries(), []);
});

void test('the offer carries the bundle\'s sha256 and size, hashed once per install; each download is packed afresh', async (t) => {
  const { deliveries, install, packed, contents } = rig(t);
  const v1 = new Uint8Array([1, 2, 3]);
  await install('rpi-garden', '1.0.0', v1);
  const offer = await deliveries.offer('rpi-garden');
  assert.deepEqual(offer, { node_id: 'rpi-garden', version: '1.0.0', entry: 'main.js', display_name: 'Garden pump', sha256: sha(v1), size: 3 });
  assert.deepEqual(await deliveries.offer('rpi-garden'), offer);
  assert.equal(packed.length, 1, 'hashed once');
  assert.equal(await deliveries.offer('another-node'), null, 'a node sees only its own');
  const bundle = await deliveries.bundle('rpi-garden');
  assert.deepEqual([...bundle.bytes], [1, 2, 3]);
  assert.equal(bundle.version, '1.0.0');
  assert.equal(packed.length, 2, 'packed again for the download');
  // Files changed on disk behind the brain: the download is what is there now (the node refuses it).
  contents.set(packed[0]!, new Uint8Array([9]));
  assert.deepEqual([...(await deliveries.bundle('rpi-garden')).bytes], [9]);
  assert.equal((await deliveries.offer('rpi-garden'))?.sha256, sha(v1));
  // A new install is hashed again.
  await install('rpi-garden', '1.1.0', new Uint8Array([4, 5]));
  assert.deepEqual([(await deliveries.offer('rpi-garden'))?.version, (await deliveries.offer('rpi-garden'))?.sha256], ['1.1.0', sha(new Uint8Array([4, 5]))]);
});

void test('files gone from disk: a 404 that says to install again', async (t) => {
  const { deliveries, install, contents } = rig(t);
  await install('rpi-garden', '1.0.0', new Uint8Array([1]));
  contents.clear();
  await assert.rejects(deliveries.offer('rpi-garden'), (err: unknown) => err instanceof AppError && err.status === 404 && /install it again/.test(err.message));
});

void test('reports: the latest per node; the admin sees pending until the node reports about the installed version', async (t) => {
  const { deliveries, install } = rig(t);
  await install('rpi-garden', '1.0.0', new Uint8Array([1]));
  assert.deepEqual(deliveries.deliveries(), [{ node_id: 'rpi-garden', version: '1.0.0', state: 'pending', error: null, last_report: null }]);
  const failed = await deliveries.report('rpi-garden', { version: '1.0.0', state: 'failed', error: 'sha256 mismatch' });
  assert.deepEqual(failed, { node_id: 'rpi-garden', version: '1.0.0', state: 'failed', error: 'sha256 mismatch', reported_at: '2026-01-02T00:00:00.000Z' });
  assert.equal(deliveries.deliveries()[0]!.state, 'failed');
  assert.equal(deliveries.deliveries()[0]!.error, 'sha256 mismatch');
  const installed = await deliveries.report('rpi-garden', { version: '1.0.0', state: 'installed', error: 'ignored unless failed' });
  assert.equal(installed.error, null);
  assert.equal((await deliveries.report('rpi-garden', { version: '1.0.0', state: 'failed' })).error, 'no reason given');
  await deliveries.report('rpi-garden', { version: '1.0.0', state: 'running' });
  await install('rpi-garden', '2.0.0', new Uint8Array([2]), '2026-01-03T00:00:00.000Z');
  const [row] = deliveries.deliveries();
  assert.equal(row!.version, '2.0.0');
  assert.equal(row!.state, 'pending');
  assert.equal(row!.last_report?.version, '1.0.0');
  assert.equal(row!.last_report?.state, 'running');
});
