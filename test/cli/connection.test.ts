// How the svc client finds the brain and its token: --url, SVC_URL, SVC_HOST/SVC_PORT; SVC_API_TOKEN,
// else $SVC_HOME/api-token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConnection } from '../../cli/connection';

test('url: --url, else SVC_URL, else SVC_HOST:SVC_PORT with wildcard hosts mapped to loopback', () => {
  const home = '/nonexistent-svc-home';
  assert.equal(resolveConnection({ url: 'http://pi.local:9000/', home }, { SVC_URL: 'http://x:1' }).url, 'http://pi.local:9000');
  assert.equal(resolveConnection({ home }, { SVC_URL: 'http://x:1//' }).url, 'http://x:1');
  assert.equal(resolveConnection({ home }, {}).url, 'http://127.0.0.1:9090');
  assert.equal(resolveConnection({ home }, { SVC_HOST: '0.0.0.0', SVC_PORT: '9191' }).url, 'http://127.0.0.1:9191');
  assert.equal(resolveConnection({ home }, { SVC_HOST: '::' }).url, 'http://127.0.0.1:9090');
  assert.equal(resolveConnection({ home }, { SVC_HOST: '::1' }).url, 'http://[::1]:9090');
  assert.equal(resolveConnection({ home }, { SVC_HOST: 'brain.lan' }).url, 'http://brain.lan:9090');
});

test('home: --home, else SVC_HOME, else ~/.svc', () => {
  assert.equal(resolveConnection({ home: '/a' }, { SVC_HOME: '/b' }).home, '/a');
  assert.equal(resolveConnection({}, { SVC_HOME: '/b' }).home, '/b');
  assert.equal(resolveConnection({}, {}).home, join(homedir(), '.svc'));
});

test('token: SVC_API_TOKEN, else the api-token file in home, else none', (t) => {
  const home = mkdtempSync(join(tmpdir(), 'svc-conn-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  assert.equal(resolveConnection({ home }, {}).token, undefined);
  writeFileSync(join(home, 'api-token'), 'from-file\n');
  assert.equal(resolveConnection({ home }, {}).token, 'from-file');
  assert.equal(resolveConnection({ home }, { SVC_API_TOKEN: ' from-env ' }).token, 'from-env');
  assert.equal(resolveConnection({ home }, { SVC_API_TOKEN: '  ' }).token, 'from-file');
});
