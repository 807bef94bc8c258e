// The standalone registry server in-process on loopback: the reviewer token is made at the first start
// (0600) and printed only then, it is the admin credential of the review routes, the directory has
// its pid file, and a restart keeps what was published.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { loadOrCreateReviewerToken, REVIEWER_TOKEN_FILE, startRegistryServer } from '../../daemon/registry-server';
import { publisherKey, skillBody } from '../helpers/registry-bundles';

function sink(): { stream: Writable; text: () => string } {
  let text = '';
  return { stream: new Writable({ write: (c: Buffer, _e, cb) => ((text += c.toString()), cb()) }), text: () => text };
}

const start = (dir: string, out: Writable) => startRegistryServer({ dir, host: '127.0.0.1', port: 0, version: '0.0.0-test', logLevel: 'silent', out });

void test('the reviewer token is made once, printed once, and reviews need it; a restart keeps the items and prints no token', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-registry-server-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const first = sink();
  const server = await start(dir, first.stream);
  const token = readFileSync(join(dir, REVIEWER_TOKEN_FILE), 'utf8').trim();
  assert.equal(statSync(join(dir, REVIEWER_TOKEN_FILE)).mode & 0o777, 0o600);
  assert.match(first.text(), new RegExp(`listening on ${server.url.replace(/\./g, '\\.')}`));
  assert.ok(first.text().includes(token), 'printed at the first start');

  assert.ok(existsSync(join(dir, 'brain.pid')), 'the pid file that keeps a second server off (test/e2e/registry.test.ts starts one)');
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
  assert.equal((await fetch(`${server.url}/registry/v1/review`)).status, 401);
  assert.equal((await fetch(`${server.url}/registry/v1/review`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  const published = await fetch(`${server.url}/registry/v1/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(skillBody(publisherKey(), 'weather', '1.0.0')) });
  assert.equal(published.status, 201);
  await server.stop();

  const second = sink();
  const again = await start(dir, second.stream);
  t.after(() => again.stop());
  assert.equal(second.text().includes(token), false, 'not printed again');
  const queue = (await (await fetch(`${again.url}/registry/v1/review`, { headers: { authorization: `Bearer ${token}` } })).json()) as { submissions: { name: string }[] };
  assert.deepEqual(queue.submissions.map((s) => s.name), ['weather']);
  assert.deepEqual(loadOrCreateReviewerToken(dir), { token, made: false });
});
