// /api/skills against bad input, on the built brain: every refusal is a 4xx in the spec envelope (or
// the spec 7 UnverifiedManifest body) and nothing is installed by it — an unknown id (404), malformed
// ids, relative and missing paths, both or neither of path and url, plain http to a non-loopback host,
// a body that is not JSON, params past the body limit and params the manifest refuses, an archive with
// a ../ path or a symlink entry, a manifest naming impl.py (the message says what svc runs), a
// re-install (409). After all of it the brain still answers /health and a good skill still runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Header, type HeaderData } from 'tar';
import { startBrain, type BrainProcess } from '../helpers/brain-process';
import { publisherKey, skillArchive, skillDir } from './fixtures/skill-dirs';

interface Answer {
  status: number;
  body: unknown;
}

async function send(brain: BrainProcess, method: string, path: string, body?: string, type = 'application/json'): Promise<Answer> {
  const res = await brain.api(path, { method, ...(body === undefined ? {} : { body, headers: { 'content-type': type } }) });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
}
const post = (brain: BrainProcess, path: string, body: unknown): Promise<Answer> => send(brain, 'POST', path, JSON.stringify(body));

/** A 4xx in the spec envelope {error: {code, message, details}}; returns the message. */
function refused(answer: Answer, status: number, what: string): string {
  assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
  const error = (answer.body as { error: { code: string; message: string; details: unknown } }).error;
  assert.equal(typeof error.code, 'string', what);
  assert.equal(typeof error.message, 'string', what);
  assert.ok('details' in error, what);
  return error.message;
}

/** A raw tar a hostile packer writes (no checks), gzipped. */
function rawTar(entries: readonly (HeaderData & { body?: string })[]): Buffer {
  const blocks: Buffer[] = [];
  for (const { body, ...data } of entries) {
    const bytes = Buffer.from(body ?? '');
    const block = Buffer.alloc(512);
    new Header({ mode: 0o644, mtime: new Date(0), size: bytes.length, ...data }).encode(block, 0);
    blocks.push(block, bytes, Buffer.alloc((512 - (bytes.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

void test('bad input to /api/skills is refused in the envelope, installs nothing, and leaves the brain working', { timeout: 120_000 }, async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'svc-e2e-skills-bad-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const brain = await startBrain();
  t.after(() => brain.stop());
  const before = ((await send(brain, 'GET', '/api/skills')).body as { skills: unknown[] }).skills.length;
  const key = publisherKey();
  assert.equal((await send(brain, 'PUT', `/api/publishers/keys/${key.keyId}`, JSON.stringify({ public_key: key.publicKey }))).status, 200);

  // Unknown and malformed ids.
  refused(await send(brain, 'GET', '/api/skills/no-such-skill'), 404, 'unknown id');
  refused(await send(brain, 'DELETE', '/api/skills/no-such-skill'), 404, 'unknown id delete');
  refused(await post(brain, '/api/skills/no-such-skill/execute', {}), 404, 'unknown id execute');
  for (const id of ['Upper', 'under_score', '-lead', 'trail-', 'a--b', 'x'.repeat(59), '%2E%2E', 'caf%C3%A9', '%00']) {
    const answer = await send(brain, 'GET', `/api/skills/${id}`);
    assert.ok(answer.status === 400 || answer.status === 404, `${id}: ${answer.status}`);
    refused(answer, answer.status, `id ${id}`);
  }

  // Where the skill comes from.
  assert.match(refused(await post(brain, '/api/skills/install', { path: 'relative/skill' }), 400, 'relative path'), /absolute/);
  refused(await post(brain, '/api/skills/install', { path: join(work, 'missing') }), 404, 'missing path');
  assert.match(refused(await post(brain, '/api/skills/install', {}), 400, 'neither'), /exactly one/);
  assert.match(refused(await post(brain, '/api/skills/install', { path: work, url: 'https://example.com/s.tgz' }), 400, 'both'), /exactly one/);
  assert.match(refused(await post(brain, '/api/skills/install', { url: 'http://example.com/s.tgz' }), 400, 'plain http'), /https/);
  refused(await post(brain, '/api/skills/install', { url: 'http://127.0.0.1:1/s.tgz' }), 502, 'nothing listening');
  refused(await post(brain, '/api/skills/install', { path: work, sha256: 'nope' }), 400, 'bad sha256');
  refused(await post(brain, '/api/skills/install', { path: work, force: true }), 400, 'unknown field');

  // Bodies.
  refused(await send(brain, 'POST', '/api/skills/install', '{"path": '), 400, 'not JSON');
  const plain = await send(brain, 'POST', '/api/skills/install', 'path=/tmp', 'text/plain');
  refused(plain, plain.status === 415 ? 415 : 400, 'not a JSON content type');
  const good = skillDir(work, { id: 'good', params: { type: 'object', properties: { name: { type: 'string', maxLength: 100 } }, additionalProperties: false } }, key);
  assert.equal((await post(brain, '/api/skills/install', { path: good })).status, 201);
  const huge = await post(brain, '/api/skills/good/execute', { params: { name: 'x'.repeat(2 * 1024 * 1024) } });
  assert.equal(huge.status, 413, JSON.stringify(huge.body).slice(0, 200));
  refused(huge, 413, 'past the body limit');
  refused(await post(brain, '/api/skills/good/execute', { params: { name: 'x'.repeat(1000) } }), 400, 'params the manifest refuses');
  refused(await post(brain, '/api/skills/good/execute', { params: 'not an object' }), 400, 'params not an object');

  // Archives a hostile packer made.
  const manifest = JSON.stringify({ id: 'evil', name: 'Evil', version: '1.0.0', description: '', entry: 'main.js', params: { type: 'object' }, permissions: { network: { allow: [] }, tools: [] }, triggers: [{ type: 'manual' }] });
  const dotdot = join(work, 'dotdot.tar.gz');
  writeFileSync(dotdot, rawTar([{ path: 'manifest.json', type: 'File', body: manifest }, { path: '../main.js', type: 'File', body: '1' }]));
  assert.match(refused(await post(brain, '/api/skills/install', { path: dotdot, allow_unsigned: true }), 400, '../ entry'), /archive is refused/);
  const linked = join(work, 'symlink.tar.gz');
  writeFileSync(linked, rawTar([{ path: 'manifest.json', type: 'File', body: manifest }, { path: 'main.js', type: 'SymbolicLink', linkpath: '/etc/passwd' }]));
  assert.match(refused(await post(brain, '/api/skills/install', { path: linked, allow_unsigned: true }), 400, 'symlink entry'), /archive is refused/);

  // A Python skill: the message says what svc runs.
  const python = skillDir(work, { id: 'snake', extra: { entry: 'impl.py' } });
  assert.match(refused(await post(brain, '/api/skills/install', { path: python, allow_unsigned: true }), 400, 'impl.py'), /svc runs JavaScript skills in a QuickJS sandbox/);

  // A re-install of the same version.
  assert.match(refused(await post(brain, '/api/skills/install', { path: skillArchive(skillDir(work, { id: 'good' }, key)) }), 409, 're-install'), /already installed/);

  // Nothing but `good` was installed, the audit log is empty, and the brain still works.
  const after = ((await send(brain, 'GET', '/api/skills')).body as { skills: { id: string }[] }).skills;
  assert.equal(after.length, before + 1);
  assert.deepEqual((await send(brain, 'GET', '/api/audit')).body, { entries: [] });
  assert.equal((await fetch(`${brain.url}/health`)).status, 200);
  const ran = (await post(brain, '/api/skills/good/execute', { params: { name: 'still here' } })).body as { status: string; result: unknown };
  assert.deepEqual([ran.status, ran.result], ['ok', { hello: 'still here' }]);
});
