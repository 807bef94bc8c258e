// The brain's install of a published daemon, with a fetch that answers from memory: refused unless the
// brain pins the publisher key, refused for other bytes than the sha256 names, extracted under
// <home>/daemons/<node_id>/<version> and recorded once pinned; the same install again changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DaemonInstalls } from '../../../daemon/registry/daemon-installs';
import { DAEMON_MIGRATIONS, DAEMONS_COMPONENT } from '../../../daemon/registry/registry-capability';
import { AppError, UnverifiedManifestError } from '../../../daemon/kernel/errors';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { PUBLISHER_KEYS_NAMESPACE } from '../../../protocol/publishers';
import { DEFAULT_ARCHIVE_LIMITS, packArchive } from '../../../signing/archive';
import { signArtifact } from '../../../signing/detached';
import { daemonFiles, publisherKey } from '../../helpers/registry-bundles';

const KEY = publisherKey();
const ARCHIVE = packArchive(daemonFiles('garden-pump', '0.1.0'));
const SIGNATURE = signArtifact(ARCHIVE, KEY);
const URL_ = 'http://127.0.0.1:1/registry/v1/items/garden-pump/download?version=0.1.0';

function rig(t: { after(fn: () => void): void }, pinned: Record<string, string>) {
  const home = mkdtempSync(join(tmpdir(), 'svc-daemons-'));
  const store = new SqliteStore(join(home, 'brain.db'));
  store.migrate(DAEMONS_COMPONENT, DAEMON_MIGRATIONS);
  t.after(() => {
    store.close();
    rmSync(home, { recursive: true, force: true });
  });
  let fetched = 0;
  const fetch = (async () => {
    fetched++;
    return new Response(ARCHIVE);
  }) as unknown as typeof globalThis.fetch;
  const vault = { get: (ns: string, key: string) => (ns === PUBLISHER_KEYS_NAMESPACE ? pinned[key] : undefined) };
  const installs = new DaemonInstalls(store, home, vault, { now: () => 1_800_000_000_000 }, { fetch, timeoutMs: 1000, limits: DEFAULT_ARCHIVE_LIMITS });
  return { installs, home, fetched: () => fetched };
}

const body = { url: URL_, sha256: SIGNATURE.sha256, signature: SIGNATURE };

void test('a publisher the brain does not pin is refused, and nothing is written', async (t) => {
  const { installs, home } = rig(t, {});
  await assert.rejects(installs.install(body), (err: unknown) => err instanceof UnverifiedManifestError && err.reason === 'unknown_key');
  assert.equal(existsSync(join(home, 'daemons')), false);
  assert.deepEqual(installs.list(), []);
});

void test('bytes other than the sha256 names are refused; a file URL is not fetched', async (t) => {
  const { installs } = rig(t, { [KEY.keyId]: KEY.publicKey });
  await assert.rejects(installs.install({ ...body, sha256: 'f'.repeat(64) }), (err: unknown) => err instanceof UnverifiedManifestError && err.reason === 'digest_mismatch');
  await assert.rejects(installs.install({ ...body, url: 'file:///etc/passwd' }), (err: unknown) => err instanceof AppError && err.status === 400);
});

void test('pinned: extracted under daemons/<node_id>/<version>, recorded for that node_id; installing again changes nothing', async (t) => {
  const { installs, home } = rig(t, { [KEY.keyId]: KEY.publicKey });
  const record = await installs.install(body);
  assert.deepEqual([record.node_id, record.version, record.entry, record.key_id, record.source], ['garden-pump', '0.1.0', 'bin/daemon.js', KEY.keyId, URL_]);
  assert.equal(record.path, join(home, 'daemons', 'garden-pump', '0.1.0'));
  assert.equal(readFileSync(join(record.path, 'bin', 'daemon.js'), 'utf8'), 'console.log("pump");\n');
  assert.deepEqual(await installs.install(body), record);
  assert.deepEqual(installs.list(), [record]);
});
