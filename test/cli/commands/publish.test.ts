// svc publish against a loopback stand-in for the registry: exactly one of --skill and --daemon (exit 2),
// what a skill publish sends (a deterministic archive with the manifest's file digests and
// manifest.signed.json, a detached signature by the home's publisher key), a daemon's files without
// dot-files, and bundles refused before anything is sent (a Python entry, a link, no manifest).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publish } from '../../../cli/commands/publish';
import type { PublishBody } from '../../../protocol/registry';
import { readArchiveFiles } from '../../../signing/archive';
import { verifyArtifact } from '../../../signing/detached';
import { readPublisherKey } from '../../../signing/publisher-key';
import { verifySignedManifest } from '../../../signing/signed-manifest';
import { PYTHON_REFUSED } from '../../../skills/manifest';
import { fakeBrain, io } from '../../helpers/cli-rig';

const RESULT = { id: '11111111-1111-4111-8111-111111111111', kind: 'skill', name: 'hello-skill', version: '1.0.0', submission_id: '22222222-2222-4222-8222-222222222222', state: 'submitted', visibility: 'private' };

function scratch(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-publish-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function skillDir(root: string): string {
  const dir = join(root, 'skill');
  mkdirSync(dir);
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ id: 'hello-skill', name: 'Hello', version: '1.0.0', description: 'Says hello', entry: 'main.js', params: { type: 'object' }, permissions: { network: { allow: [] }, tools: [] }, triggers: [{ type: 'manual' }] }));
  writeFileSync(join(dir, 'main.js'), 'export default () => "hi";\n');
  writeFileSync(join(dir, 'NOTES.txt'), 'not part of the skill');
  return dir;
}

const args = (o: Partial<{ skill: string; daemon: string }>) => ({ skill: o.skill, daemon: o.daemon, registry: undefined, json: false });

void test('exactly one of --skill and --daemon: none or both is exit 2 with the usage, and nothing is sent', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [201, RESULT]);
  for (const o of [{}, { skill: 'a', daemon: 'b' }]) {
    const { io: cli, text } = io();
    assert.equal(await publish(cli, scratch(t), conn, args(o)), 2);
    assert.match(text.err, /usage: svc publish --skill <dir> \| --daemon <dir>/);
  }
  assert.equal(seen.length, 0);
});

void test('a skill: signed archive with file digests and manifest.signed.json, sent to the registry; prints submitted and private', async (t) => {
  const root = scratch(t);
  const home = join(root, 'home');
  const { conn, seen } = await fakeBrain(t, () => [201, RESULT]);
  const { io: cli, text } = io();
  assert.equal(await publish(cli, home, conn, args({ skill: skillDir(root) })), 0, text.err);
  assert.match(text.out, /^state: submitted$/m);
  assert.match(text.out, /^visibility: private$/m);
  assert.equal(seen[0]!.url, '/registry/v1/items');
  const body = seen[0]!.body as PublishBody;
  const key = readPublisherKey(home)!;
  assert.equal(body.public_key, key.publicKey);
  const archive = new Uint8Array(Buffer.from(body.archive, 'base64'));
  assert.equal(verifyArtifact(archive, body.signature, (id) => (id === key.keyId ? key.publicKey : undefined)).ok, true);
  const files = await readArchiveFiles(archive);
  assert.deepEqual([...files.keys()].sort(), ['main.js', 'manifest.json', 'manifest.signed.json']);
  const envelope = JSON.parse(Buffer.from(files.get('manifest.signed.json')!).toString()) as unknown;
  assert.equal(verifySignedManifest(envelope, (id) => (id === key.keyId ? key.publicKey : undefined)).ok, true);
  assert.ok((JSON.parse(Buffer.from(files.get('manifest.json')!).toString()) as { files: Record<string, string> }).files['main.js']);
});

void test('a daemon: every file but dot-files; a Python entry, a link or no manifest is exit 1 before anything is sent', async (t) => {
  const root = scratch(t);
  const dir = join(root, 'daemon');
  mkdirSync(join(dir, 'bin'), { recursive: true });
  mkdirSync(join(dir, '.git'));
  writeFileSync(join(dir, '.git', 'HEAD'), 'x');
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ node_id: 'garden-pump', version: '0.1.0', entry: 'bin/run.js' }));
  writeFileSync(join(dir, 'bin', 'run.js'), 'x');
  const { conn, seen } = await fakeBrain(t, () => [201, { ...RESULT, kind: 'daemon', name: 'garden-pump' }]);
  assert.equal(await publish(io().io, join(root, 'home'), conn, args({ daemon: dir })), 0);
  const files = await readArchiveFiles(new Uint8Array(Buffer.from((seen[0]!.body as PublishBody).archive, 'base64')));
  assert.deepEqual([...files.keys()].sort(), ['bin/run.js', 'manifest.json']);

  symlinkSync('/etc/passwd', join(dir, 'bin', 'link'));
  const linked = io();
  assert.equal(await publish(linked.io, join(root, 'home'), conn, args({ daemon: dir })), 1);
  assert.match(linked.text.err, /no links/);
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ node_id: 'garden-pump', version: '0.1.0', entry: 'impl.py' }));
  const python = io();
  assert.equal(await publish(python.io, join(root, 'home'), conn, args({ daemon: dir })), 1);
  assert.ok(python.text.err.includes(PYTHON_REFUSED));
  const none = io();
  assert.equal(await publish(none.io, join(root, 'home'), conn, args({ daemon: join(root, 'nowhere') })), 1);
  assert.match(none.text.err, /manifest\.json: missing/);
  assert.equal(seen.length, 1);
});
