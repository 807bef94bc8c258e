import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { keyFilePath, listNodeKeys, pairedNodeIds, readNodeKey, writeNodeKey } from '../../mesh/node-key-store';
import { newDeviceKey } from '../../mesh/pair-token';

const scratch = (t: { after(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-keys-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

void test('a key is written 0600 under a directory created 0700, read back, and replaced atomically', async (t) => {
  const dir = join(scratch(t), 'a', 'keys');
  const first = newDeviceKey();
  const path = await writeNodeKey(dir, 'rpi-garden', first);
  assert.equal(path, join(dir, 'rpi-garden.key'));
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.equal(readFileSync(path, 'utf8'), `${first}\n`);
  assert.equal(await readNodeKey(dir, 'rpi-garden'), first);
  const second = newDeviceKey();
  await writeNodeKey(dir, 'rpi-garden', second);
  assert.equal(await readNodeKey(dir, 'rpi-garden'), second);
  assert.deepEqual(readdirSync(dir), ['rpi-garden.key'], 'no temp file is left behind');
  assert.deepEqual(await listNodeKeys(dir), ['rpi-garden.key']);
});

void test('an existing directory keeps its mode; unsafe node ids get the safe file name of node-protocol.md', async (t) => {
  const dir = scratch(t);
  mkdirSync(join(dir, 'shared'), { mode: 0o755 });
  const path = await writeNodeKey(join(dir, 'shared'), 'kitchen/esp32', newDeviceKey());
  assert.equal(statSync(join(dir, 'shared')).mode & 0o777, 0o755);
  assert.match(path, /kitchen_esp32-[0-9a-f]{8}\.key$/);
  assert.equal(keyFilePath(join(dir, 'shared'), 'kitchen/esp32'), path);
});

void test('something that is not a node key is never written; a missing or foreign file reads as no key', async (t) => {
  const dir = scratch(t);
  await assert.rejects(writeNodeKey(dir, 'n1', 'svcpt_notakey'), /not a node key/);
  assert.deepEqual(readdirSync(dir), []);
  assert.equal(await readNodeKey(join(dir, 'missing'), 'n1'), null);
  assert.deepEqual(await listNodeKeys(join(dir, 'missing')), []);
  writeFileSync(join(dir, 'n1.key'), 'hello\n');
  assert.equal(await readNodeKey(dir, 'n1'), null);
});

void test('property: any node id round-trips its key through its own file, and the files stay in the directory', async (t) => {
  const dir = scratch(t);
  await fc.assert(
    fc.asyncProperty(fc.string({ minLength: 1, maxLength: 140 }), async (id) => {
      const key = newDeviceKey();
      const path = await writeNodeKey(dir, id, key);
      assert.equal(join(path, '..'), dir);
      assert.equal(await readNodeKey(dir, id), key);
    }),
    { numRuns: 60 },
  );
  assert.ok(readdirSync(dir).every((f) => f.endsWith('.key')));
});

// The phone bridge keeps its key the same way, and lists its bridges by node id.
void test('write, read and list node keys', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-bridge-keyfile-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'keys');
  assert.deepEqual(await pairedNodeIds(dir), [], 'no directory yet');
  assert.equal(await readNodeKey(dir, 'phone-a'), null);
  const key = newDeviceKey();
  assert.equal(await writeNodeKey(dir, 'phone-a', key), keyFilePath(dir, 'phone-a'));
  assert.equal(statSync(keyFilePath(dir, 'phone-a')).mode & 0o777, 0o600);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.equal(await readNodeKey(dir, 'phone-a'), key);
  const replaced = newDeviceKey();
  await writeNodeKey(dir, 'phone-a', replaced);
  assert.equal(await readNodeKey(dir, 'phone-a'), replaced);
  await writeNodeKey(dir, 'phone-b', newDeviceKey());
  writeFileSync(join(dir, '.phone-c.key.0a1b.tmp'), 'partial');
  writeFileSync(join(dir, 'notes.txt'), 'x');
  writeFileSync(join(dir, 'phone-d.key'), 'not a key\n');
  assert.deepEqual(await pairedNodeIds(dir), ['phone-a', 'phone-b', 'phone-d']);
  assert.equal(await readNodeKey(dir, 'phone-d'), null, 'a file that holds no node key');
  await assert.rejects(writeNodeKey(dir, 'phone-e', 'svcpt_not-a-key'), /not a node key; nothing was written/);
  assert.deepEqual(await pairedNodeIds(dir), ['phone-a', 'phone-b', 'phone-d']);
});
