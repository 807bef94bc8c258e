// The brain id: made once in $SVC_HOME/brain-id (0600), the same on every later read, agreed on by
// creators that race on a new home (real threads on a real directory), and a damaged file is an error
// that names the fix rather than a silent new identity.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { BRAIN_ID_FILE, BrainIdError, isBrainId, loadBrainId } from '../../mesh/brain-id';

const home = (t: { after(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-brain-id-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

if (!isMainThread) {
  // A racing creator: wait for the start signal so every thread calls loadBrainId at once.
  const { dir, start } = workerData as { dir: string; start: SharedArrayBuffer };
  Atomics.wait(new Int32Array(start), 0, 0);
  parentPort?.postMessage(loadBrainId(dir));
} else {
  void test('the id is made once, 0600, and read back unchanged', (t) => {
    const dir = home(t);
    const id = loadBrainId(dir);
    assert.ok(isBrainId(id), id);
    assert.equal(statSync(join(dir, BRAIN_ID_FILE)).mode & 0o777, 0o600);
    assert.equal(readFileSync(join(dir, BRAIN_ID_FILE), 'utf8'), `${id}\n`);
    assert.equal(loadBrainId(dir), id);
    assert.deepEqual(readdirSync(dir), [BRAIN_ID_FILE], 'no temp file left behind');
  });

  void test('creators racing on a new home all get the same id', async (t) => {
    const dir = home(t);
    const start = new SharedArrayBuffer(4);
    const workers = Array.from({ length: 6 }, () => new Worker(new URL(import.meta.url), { workerData: { dir, start } }));
    const ids = workers.map((w) => new Promise<string>((resolve, reject) => w.once('message', resolve).once('error', reject)));
    Atomics.store(new Int32Array(start), 0, 1);
    Atomics.notify(new Int32Array(start), 0);
    const got = await Promise.all(ids);
    await Promise.all(workers.map((w) => w.terminate()));
    assert.equal(new Set(got).size, 1, got.join(', '));
    assert.equal(loadBrainId(dir), got[0]);
    assert.deepEqual(readdirSync(dir), [BRAIN_ID_FILE]);
  });

  void test('a file that holds no id is refused with the fix, never replaced', (t) => {
    const dir = home(t);
    for (const text of ['', 'not-a-uuid\n', 'ABCDEF01-2345-4678-89AB-CDEF01234567\n']) {
      writeFileSync(join(dir, BRAIN_ID_FILE), text);
      assert.throws(() => loadBrainId(dir), (err: unknown) => err instanceof BrainIdError && /restore it from a backup, or delete it/.test(err.message));
      assert.equal(readFileSync(join(dir, BRAIN_ID_FILE), 'utf8'), text);
    }
  });
}
