// The node-agent's daemon folder: an install extracts into <root>/<version> and records held.json; a
// newer version replaces it and the old folder goes; a hostile bundle (../ path) is refused with
// BundleRefused, leaving the held daemon and no staging folder behind; a held.json that is not an
// offer is taken as nothing held; a version that is not semver never becomes a folder name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BundleRefused, DaemonStore, daemonRoot, HELD_FILE } from '../../node-agent/daemon-store';
import type { DaemonOffer } from '../../protocol/daemons';
import { packArchive } from '../../signing/archive';
import { daemonFiles, hostileTar } from '../helpers/registry-bundles';

const offer = (version: string): DaemonOffer => ({ node_id: 'rpi-garden', version, entry: 'bin/daemon.js', display_name: 'Garden pump', sha256: 'f'.repeat(64), size: 1 });

function rig(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-agent-daemons-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const root = daemonRoot(dir, 'rpi-garden');
  return { root, store: new DaemonStore(root) };
}

void test('install, hold, replace with a newer version', async (t) => {
  const { root, store } = rig(t);
  assert.equal(root.endsWith(join('daemons', 'rpi-garden')), true);
  assert.equal(await store.held(), null);
  const first = await store.install(offer('1.0.0'), packArchive(daemonFiles('rpi-garden', '1.0.0')));
  assert.equal(first.path, join(root, '1.0.0'));
  assert.equal(readFileSync(join(root, '1.0.0', 'bin', 'daemon.js'), 'utf8'), 'console.log("pump");\n');
  assert.deepEqual(await store.held(), { offer: offer('1.0.0'), path: join(root, '1.0.0') });
  await store.install(offer('1.1.0'), packArchive(daemonFiles('rpi-garden', '1.1.0')));
  assert.deepEqual(readdirSync(root).sort(), ['1.1.0', HELD_FILE]);
  assert.equal((await store.held())?.offer.version, '1.1.0');
  // The same version again (a bundle that changed on the brain) replaces the folder.
  await store.install({ ...offer('1.1.0'), sha256: 'e'.repeat(64) }, packArchive(daemonFiles('rpi-garden', '1.1.0', 'Other')));
  assert.equal((await store.held())?.offer.sha256, 'e'.repeat(64));
  assert.deepEqual(readdirSync(root).sort(), ['1.1.0', HELD_FILE]);
});

void test('a hostile bundle is refused and changes nothing', async (t) => {
  const { root, store } = rig(t);
  await store.install(offer('1.0.0'), packArchive(daemonFiles('rpi-garden', '1.0.0')));
  const evil = hostileTar([{ path: '../escape.js', type: 'File', body: new TextEncoder().encode('x') }]);
  await assert.rejects(store.install(offer('2.0.0'), evil), BundleRefused);
  await assert.rejects(store.install(offer('2.0.0'), new Uint8Array([1, 2, 3])), BundleRefused);
  assert.deepEqual(readdirSync(root).sort(), ['1.0.0', HELD_FILE]);
  assert.equal(existsSync(join(root, '..', 'escape.js')), false);
  assert.equal((await store.held())?.offer.version, '1.0.0');
});

void test('a held.json that is not an offer counts as nothing held; a non-semver version is refused', async (t) => {
  const { root, store } = rig(t);
  await store.install(offer('1.0.0'), packArchive(daemonFiles('rpi-garden', '1.0.0')));
  writeFileSync(join(root, HELD_FILE), '{"version": ');
  assert.equal(await store.held(), null);
  writeFileSync(join(root, HELD_FILE), JSON.stringify({ ...offer('1.0.0'), version: '../../etc' }));
  assert.equal(await store.held(), null);
  await assert.rejects(store.install(offer('../x'), packArchive(daemonFiles('rpi-garden', '1.0.0'))), /not a semantic version/);
});
