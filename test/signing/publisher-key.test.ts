// The publisher key file: made once (0600, in a 0700 folder made for it), the same on every later read,
// agreed on by creators racing on a new folder (real threads on a real directory), never made by
// readPublisherKey, and a damaged file is an error that names the fix and is left as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { keyIdOf, rawPublicKey, signMessage, verifyMessage } from '../../signing/ed25519';
import { loadOrCreatePublisherKey, PUBLISHER_KEY_FILE, PublisherKeyError, readPublisherKey } from '../../signing/publisher-key';
import { publicKeyOf } from '../../signing/ed25519';

const home = (t: { after(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-publisher-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

if (!isMainThread) {
  // A racing creator: wait for the start signal so every thread creates at once.
  const { dir, start } = workerData as { dir: string; start: SharedArrayBuffer };
  Atomics.wait(new Int32Array(start), 0, 0);
  const key = loadOrCreatePublisherKey(dir);
  parentPort?.postMessage({ keyId: key.keyId, publicKey: key.publicKey, signature: signMessage(key.privateKey, 'race') });
} else {
  void test('the key is made once, 0600 in a new 0700 folder, and the same on every later load', (t) => {
    const dir = join(home(t), '.svc');
    assert.equal(readPublisherKey(dir), undefined, 'reading makes nothing');
    const first = loadOrCreatePublisherKey(dir);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dir, PUBLISHER_KEY_FILE)).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), [PUBLISHER_KEY_FILE], 'no temp file left behind');
    assert.equal(first.keyId, keyIdOf(first.publicKey));
    assert.match(first.keyId, /^[0-9a-f]{24}$/);
    assert.equal(rawPublicKey(first.privateKey), first.publicKey);
    const file = JSON.parse(readFileSync(join(dir, PUBLISHER_KEY_FILE), 'utf8')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(file).sort(), ['key_id', 'private_key', 'public_key', 'v']);
    for (const again of [loadOrCreatePublisherKey(dir), readPublisherKey(dir)!]) {
      assert.equal(again.keyId, first.keyId);
      assert.equal(again.publicKey, first.publicKey);
      assert.ok(verifyMessage(publicKeyOf(first.publicKey)!, 'x', signMessage(again.privateKey, 'x')), 'the private key is the same too');
    }
  });

  void test('creators racing on a new folder all get the same key', async (t) => {
    for (let round = 0; round < 2; round++) {
      const dir = join(home(t), `round-${round}`);
      const start = new SharedArrayBuffer(4);
      const workers = Array.from({ length: 8 }, () => new Worker(new URL(import.meta.url), { workerData: { dir, start } }));
      type Got = { keyId: string; publicKey: string; signature: string };
      const got = workers.map((w) => new Promise<Got>((resolve, reject) => w.once('message', resolve).once('error', reject)));
      // Every thread is up and waiting before the start signal.
      await Promise.all(workers.map((w) => new Promise((resolve) => w.once('online', resolve))));
      Atomics.store(new Int32Array(start), 0, 1);
      Atomics.notify(new Int32Array(start), 0);
      const keys = await Promise.all(got);
      await Promise.all(workers.map((w) => w.terminate()));
      assert.equal(new Set(keys.map((k) => k.publicKey)).size, 1, keys.map((k) => k.keyId).join(', '));
      const kept = readPublisherKey(dir)!;
      assert.equal(kept.publicKey, keys[0]!.publicKey);
      for (const k of keys) assert.ok(verifyMessage(publicKeyOf(kept.publicKey)!, 'race', k.signature), 'each signed with the kept private key');
      assert.deepEqual(readdirSync(dir), [PUBLISHER_KEY_FILE]);
    }
  });

  void test('a damaged key file is refused with the fix and left as it was, never replaced', (t) => {
    const dir = home(t);
    const file = join(dir, PUBLISHER_KEY_FILE);
    const good = JSON.parse(readFileSync(join(((): string => { const d = join(dir, 'gen'); loadOrCreatePublisherKey(d); return d; })(), PUBLISHER_KEY_FILE), 'utf8')) as Record<string, unknown>;
    const other = readPublisherKey(((): string => { const d = join(dir, 'other'); loadOrCreatePublisherKey(d); return d; })())!;
    for (const text of [
      '',
      'not json',
      '[]',
      JSON.stringify({ ...good, v: 2 }),
      JSON.stringify({ ...good, extra: true }),
      JSON.stringify({ ...good, key_id: 'chosen-by-hand' }),
      JSON.stringify({ ...good, private_key: 'short' }),
      JSON.stringify({ ...good, public_key: other.publicKey, key_id: other.keyId }),
      JSON.stringify(good).slice(0, 60),
    ]) {
      writeFileSync(file, text);
      for (const read of [(): unknown => readPublisherKey(dir), (): unknown => loadOrCreatePublisherKey(dir)]) {
        assert.throws(read, (err: unknown) => err instanceof PublisherKeyError && err.message.includes(file) && /restore it from a backup, or delete it/.test(err.message), text);
      }
      assert.equal(readFileSync(file, 'utf8'), text);
    }
  });
}
