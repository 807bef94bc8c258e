// The API bearer token (spec 5.2, docs/api.md): SVC_API_TOKEN, else the systemd credential, else
// $SVC_HOME/api-token created 0600 on first start; compared in constant time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import fc from 'fast-check';
import { apiTokenVerifier, loadApiToken, tokenMatches } from '../../../daemon/auth/api-token';
import { ADMIN } from '../../../daemon/auth/principal';

function home(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('first start creates $SVC_HOME/api-token: 0600, 256 random bits in base64url, reused afterwards', (t) => {
  const dir = home(t);
  const token = loadApiToken({ home: dir });
  assert.match(token, /^[A-Za-z0-9_-]{43}$/);
  const file = join(dir, 'api-token');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(readFileSync(file, 'utf8'), `${token}\n`);
  assert.deepEqual(readdirSync(dir), ['api-token'], 'no temporary file left');
  assert.equal(loadApiToken({ home: dir }), token);
  assert.notEqual(loadApiToken({ home: home(t) }), token);
});

test('SVC_API_TOKEN wins (trimmed), then the systemd credential, then the file; blank values are ignored', (t) => {
  const dir = home(t);
  const creds = join(dir, 'creds');
  mkdirSync(creds);
  writeFileSync(join(creds, 'api-token'), 'from-credential\n');
  writeFileSync(join(dir, 'api-token'), 'from-file\n');
  assert.equal(loadApiToken({ home: dir, envToken: '  from-env \n', credentialsDir: creds }), 'from-env');
  assert.equal(loadApiToken({ home: dir, envToken: '   ', credentialsDir: creds }), 'from-credential');
  assert.equal(loadApiToken({ home: dir, credentialsDir: join(dir, 'missing') }), 'from-file');
});

test('an empty token file is replaced by a fresh token', (t) => {
  const dir = home(t);
  writeFileSync(join(dir, 'api-token'), '\n');
  const token = loadApiToken({ home: dir });
  assert.match(token, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(readFileSync(join(dir, 'api-token'), 'utf8'), `${token}\n`);
});

test('tokenMatches: only the exact token matches; absent, empty, longer, shorter and case-changed do not', () => {
  const token = 'AbCdEf0123456789';
  assert.equal(tokenMatches(token, token), true);
  for (const guess of [undefined, '', 'AbCdEf012345678', `${token}x`, token.toLowerCase(), ` ${token}`]) {
    assert.equal(tokenMatches(token, guess), false, String(guess));
  }
  fc.assert(fc.property(fc.string(), fc.string(), (a, b) => tokenMatches(a, b) === (a === b)));
});

test('apiTokenVerifier: the exact token is the admin; anything else is not its credential', () => {
  const verifier = apiTokenVerifier('the-token');
  assert.equal(verifier.verify({ scheme: 'bearer', token: 'the-token' }), ADMIN);
  for (const token of ['the-token ', 'THE-TOKEN', 'the-toke', 'the-tokenx', 'x']) assert.equal(verifier.verify({ scheme: 'bearer', token }), undefined, token);
  fc.assert(fc.property(fc.string(), fc.string({ minLength: 1 }), (expected, presented) => (apiTokenVerifier(expected).verify({ scheme: 'bearer', token: presented }) === ADMIN) === (expected === presented)));
});
