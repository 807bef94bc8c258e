// daemon/skills/skill-installer.ts with real folders and a real HTTP server on 127.0.0.1: a skill from
// a folder, from a .tar.gz path (packed with signing/archive.ts) and from a URL; the URL rules (https,
// plain http only to loopback, no credentials, no redirects, a size bound, a non-2xx answer is 502);
// the archive's sha256 and detached signature (ok, wrong key, unknown key); relative and missing
// paths; place() swapping a skill's folder in one rename and sweep() removing what an interrupted
// install left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { checkUrl, MAX_ARCHIVE_BYTES, SkillInstaller } from '../../../daemon/skills/skill-installer';
import { AppError, UnverifiedManifestError } from '../../../daemon/kernel/errors';
import { packArchive } from '../../../signing/archive';
import { sha256Hex, signArtifact } from '../../../signing/detached';
import { newKey, writeSkill, type TestKey } from './skills-rig';

interface Setup {
  root: string;
  installer: SkillInstaller;
  pinned: Map<string, string>;
  trust(key: TestKey): void;
}

function setup(t: { after(fn: () => unknown): void }): Setup {
  const root = mkdtempSync(join(tmpdir(), 'svc-skill-installer-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const pinned = new Map<string, string>();
  return { root, pinned, installer: new SkillInstaller({ dir: join(root, 'skills'), pinned: (id) => pinned.get(id) }), trust: (k) => void pinned.set(k.keyId, k.publicKey) };
}

/** The .tar.gz of a skill folder's files. */
function archiveOf(dir: string): Uint8Array {
  return packArchive(readdirSync(dir).map((name) => ({ path: name, bytes: readFileSync(join(dir, name)) })));
}

/** A server on 127.0.0.1 answering `routes[path]`: bytes (200), a redirect, or a status. */
async function serve(t: { after(fn: () => unknown): void }, routes: Record<string, Uint8Array | { redirect: string } | { status: number }>): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const route = routes[req.url ?? ''];
    if (route === undefined) return void res.writeHead(404).end();
    if (route instanceof Uint8Array) return void res.writeHead(200, { 'content-type': 'application/gzip' }).end(route);
    if ('redirect' in route) return void res.writeHead(302, { location: route.redirect }).end();
    res.writeHead(route.status).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

const status = (code: number, includes?: string) => (err: unknown): boolean => {
  assert.ok(err instanceof AppError, String(err));
  assert.equal(err.status, code, err.message);
  if (includes) assert.ok(err.message.includes(includes), err.message);
  return true;
};
const reason = (r: string) => (err: unknown): boolean => {
  assert.ok(err instanceof UnverifiedManifestError, String(err));
  assert.equal(err.reason, r, err.message);
  return true;
};

void test('a signed skill from its folder, from a .tar.gz path and from a loopback URL: the same checked files', async (t) => {
  const s = setup(t);
  const key = newKey();
  s.trust(key);
  const dir = writeSkill(s.root, { id: 'weather' }, key);
  const tgz = join(s.root, 'weather.tar.gz');
  const archive = archiveOf(dir);
  writeFileSync(tgz, archive);
  const server = await serve(t, { '/weather.tar.gz': archive });
  const fromDir = await s.installer.check({ path: dir });
  const fromTgz = await s.installer.check({ path: tgz, sha256: sha256Hex(archive) });
  const fromUrl = await s.installer.check({ url: `${server.url}/weather.tar.gz`, sha256: sha256Hex(archive), signature: signArtifact(archive, key) });
  for (const checked of [fromDir, fromTgz, fromUrl]) {
    assert.equal(checked.signedBy, key.keyId);
    assert.equal(checked.manifest.id, 'weather');
    assert.deepEqual([...checked.files.keys()].sort(), [...fromDir.files.keys()].sort());
  }
  assert.deepEqual(fromUrl.source, { kind: 'url', url: `${server.url}/weather.tar.gz` });
  assert.deepEqual(fromTgz.source, { kind: 'path', path: tgz });
  assert.deepEqual(server.hits, ['/weather.tar.gz']);
});

void test('an archive\'s sha256 and detached signature: a wrong digest, a signature by an unpinned key or by another key are refused', async (t) => {
  const s = setup(t);
  const key = newKey();
  const stranger = newKey();
  s.trust(key);
  const archive = archiveOf(writeSkill(s.root, {}, key));
  const tgz = join(s.root, 'a.tar.gz');
  writeFileSync(tgz, archive);
  await assert.rejects(s.installer.check({ path: tgz, sha256: 'f'.repeat(64) }), reason('digest_mismatch'));
  await assert.rejects(s.installer.check({ path: tgz, signature: signArtifact(archive, stranger) }), reason('unknown_key'));
  // A signature by another key, claiming the trusted key's id.
  const forged = { ...signArtifact(archive, stranger), key_id: key.keyId };
  await assert.rejects(s.installer.check({ path: tgz, signature: forged }), reason('signature_mismatch'));
  await assert.rejects(s.installer.check({ path: tgz, signature: { alg: 'rsa' } }), reason('malformed'));
  // The signature of other bytes.
  await assert.rejects(s.installer.check({ path: tgz, signature: signArtifact(Buffer.from('other'), key) }), reason('digest_mismatch'));
  assert.equal((await s.installer.check({ path: tgz, signature: signArtifact(archive, key) })).signedBy, key.keyId);
  // A directory has no archive digest to check.
  await assert.rejects(s.installer.check({ path: s.root, sha256: sha256Hex(archive) }), status(400, 'directory'));
});

void test('URLs: plain http only to loopback, no credentials, not a URL → 400; a redirect and a non-2xx answer → 502; an oversize download → 400', async (t) => {
  const s = setup(t);
  const big = new Uint8Array(MAX_ARCHIVE_BYTES + 1);
  const server = await serve(t, { '/moved': { redirect: '/skill.tar.gz' }, '/skill.tar.gz': archiveOf(writeSkill(s.root)), '/gone': { status: 410 }, '/big': big });
  for (const url of ['http://example.com/skill.tar.gz', 'http://10.0.0.1/s.tgz', 'ftp://127.0.0.1/s.tgz', 'file:///etc/passwd', 'not a url']) {
    await assert.rejects(s.installer.check({ url }), status(400), url);
  }
  assert.throws(() => checkUrl('https://user:pw@example.com/s.tgz'), status(400, 'credentials'));
  assert.equal(checkUrl('https://example.com/s.tgz').hostname, 'example.com');
  for (const ok of ['http://127.0.0.1:1/x', 'http://127.8.9.1/x', 'http://localhost/x', 'http://[::1]/x']) assert.ok(checkUrl(ok), ok);
  await assert.rejects(s.installer.check({ url: `${server.url}/moved` }), status(502));
  assert.deepEqual(server.hits, ['/moved'], 'the redirect is not followed');
  await assert.rejects(s.installer.check({ url: `${server.url}/gone` }), status(502, '410'));
  await assert.rejects(s.installer.check({ url: `${server.url}/big` }), status(400, 'larger than'));
  const closed = `http://127.0.0.1:1/x.tar.gz`;
  await assert.rejects(s.installer.check({ url: closed }), status(502));
});

void test('an oversize download without a content-length is cut at the bound', async (t) => {
  const s = setup(t);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'transfer-encoding': 'chunked' });
    const chunk = Buffer.alloc(1024 * 1024);
    let sent = 0;
    const more = (): void => {
      while (sent < 10 && res.write(chunk)) sent++;
      if (sent >= 10) res.end();
      else res.once('drain', more);
    };
    more();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const port = (server.address() as AddressInfo).port;
  await assert.rejects(s.installer.check({ url: `http://127.0.0.1:${port}/stream` }), status(400, 'larger than'));
});

void test('paths: relative → 400, missing → 404, neither or both of path and url → 400, a broken archive → 400', async (t) => {
  const s = setup(t);
  await assert.rejects(s.installer.check({ path: 'skills/greeter' }), status(400, 'absolute'));
  await assert.rejects(s.installer.check({ path: join(s.root, 'nothing') }), status(404));
  await assert.rejects(s.installer.check({}), status(400, 'exactly one'));
  await assert.rejects(s.installer.check({ path: s.root, url: 'https://example.com/x' }), status(400, 'exactly one'));
  const junk = join(s.root, 'junk.tar.gz');
  writeFileSync(junk, 'not gzip at all');
  await assert.rejects(s.installer.check({ path: junk }), status(400, 'archive is refused'));
});

void test('place() swaps a skill\'s folder in one rename (no staging or old folder left); remove() deletes it; sweep() removes leftovers', async (t) => {
  const s = setup(t);
  const skillsDir = join(s.root, 'skills');
  assert.deepEqual(await s.installer.sweep(), []);
  const v1 = await s.installer.check({ path: writeSkill(s.root, { id: 'lamp', source: 'function main() { return 1; }' }), allow_unsigned: true });
  await s.installer.place(v1);
  const v2 = await s.installer.check({ path: writeSkill(s.root, { id: 'lamp', version: '2.0.0', source: 'function main() { return 2; }' }), allow_unsigned: true });
  await s.installer.place(v2);
  assert.deepEqual(readdirSync(skillsDir), ['lamp']);
  assert.equal(readFileSync(join(skillsDir, 'lamp', 'main.js'), 'utf8'), 'function main() { return 2; }');
  assert.deepEqual(await s.installer.installedDirs(), ['lamp']);
  mkdirSync(join(skillsDir, '.staging-1234'));
  mkdirSync(join(skillsDir, '.old-5678'));
  assert.deepEqual((await s.installer.sweep()).sort(), ['.old-5678', '.staging-1234']);
  assert.deepEqual(readdirSync(skillsDir), ['lamp']);
  await s.installer.remove('lamp');
  await s.installer.remove('lamp');
  assert.equal(existsSync(join(skillsDir, 'lamp')), false);
  assert.deepEqual(readdirSync(skillsDir), []);
});

void test('sweep() puts back the version an upgrade set aside when it was cut before the new one was in place, and drops it when the new one is there', async (t) => {
  const s = setup(t);
  const skillsDir = join(s.root, 'skills');
  await s.installer.sweep();
  await s.installer.place(await s.installer.check({ path: writeSkill(s.root, { id: 'lamp', source: 'function main() { return 1; }' }), allow_unsigned: true }));
  // Cut between the renames: the old version is aside, the new one still staged.
  renameSync(join(skillsDir, 'lamp'), join(skillsDir, '.old-lamp.1111'));
  mkdirSync(join(skillsDir, '.staging-2222'));
  assert.deepEqual((await s.installer.sweep()).sort(), ['.old-lamp.1111', '.staging-2222']);
  assert.deepEqual(readdirSync(skillsDir), ['lamp']);
  assert.equal(readFileSync(join(skillsDir, 'lamp', 'main.js'), 'utf8'), 'function main() { return 1; }');
  // Cut after the second rename: the new version is in place, the old one only needs removing.
  mkdirSync(join(skillsDir, '.old-lamp.3333'));
  await s.installer.sweep();
  assert.deepEqual(readdirSync(skillsDir), ['lamp']);
});
