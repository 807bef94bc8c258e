// The bridge's node key file: written 0600 in a 0700 directory, read back, listed by node id (temp
// files and other names left out), and something that is not a node key is neither written nor read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newDeviceKey } from '../../mesh/pair-token';
import { keyFilePath, pairedNodeIds, readNodeKey, writeNodeKey } from '../../phone-bridge/key-file';

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
