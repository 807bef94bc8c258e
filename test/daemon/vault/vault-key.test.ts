// Where the vault key comes from (env, systemd credential, $SVC_HOME/vault.key, created 0600) and
// which spellings of 32 bytes are accepted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import fc from 'fast-check';
import { loadVaultKey, loadVaultKeyReadOnly, parseVaultKey, VaultKeyError } from '../../../daemon/vault/vault-key';

function home(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('parseVaultKey accepts 64 hex characters and base64 (standard or url-safe) of 32 bytes', () => {
  const key = randomBytes(32);
  assert.deepEqual(parseVaultKey(key.toString('hex'), 'x'), key);
  assert.deepEqual(parseVaultKey(key.toString('hex').toUpperCase(), 'x'), key);
  assert.deepEqual(parseVaultKey(`  ${key.toString('hex')}\n`, 'x'), key);
  assert.deepEqual(parseVaultKey(key.toString('base64'), 'x'), key);
  assert.deepEqual(parseVaultKey(key.toString('base64url'), 'x'), key);
});

test('parseVaultKey refuses anything else, naming where the key came from', () => {
  const bad = ['', 'abc', 'z'.repeat(64), randomBytes(32).toString('hex').slice(1), randomBytes(31).toString('base64'), randomBytes(33).toString('base64'), `${randomBytes(32).toString('base64')}!`];
  for (const text of bad) {
    assert.throws(
      () => parseVaultKey(text, '/etc/credstore/vault.key'),
      (err: unknown) => err instanceof VaultKeyError && err.message.startsWith('/etc/credstore/vault.key: ') && !err.message.includes(text || '\u0000'),
      JSON.stringify(text),
    );
  }
});

test('property: every 32-byte key round-trips through hex and base64; any other text parses to 32 bytes or throws VaultKeyError', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
      const key = Buffer.from(bytes);
      assert.deepEqual(parseVaultKey(key.toString('hex'), 'p'), key);
      assert.deepEqual(parseVaultKey(key.toString('base64'), 'p'), key);
    }),
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 80 }), (text) => {
      try {
        assert.equal(parseVaultKey(text, 'p').length, 32);
      } catch (err) {
        assert.ok(err instanceof VaultKeyError);
      }
    }),
  );
});

test('first start creates $SVC_HOME/vault.key, 0600, and later starts read the same key', (t) => {
  const dir = home(t);
  const created = loadVaultKey({ home: dir });
  assert.equal(created.source, 'created');
  const file = join(dir, 'vault.key');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.match(readFileSync(file, 'utf8'), /^[0-9a-f]{64}\n$/);
  assert.deepEqual(readdirSync(dir), ['vault.key'], 'no temporary file left');
  const again = loadVaultKey({ home: dir });
  assert.equal(again.source, 'file');
  assert.deepEqual(again.key, created.key);
});

test('SVC_VAULT_KEY wins over the systemd credential, which wins over the file', (t) => {
  const dir = home(t);
  const creds = join(dir, 'creds');
  mkdirSync(creds);
  const [envKey, credKey, fileKey] = [randomBytes(32), randomBytes(32), randomBytes(32)];
  writeFileSync(join(creds, 'vault.key'), credKey.toString('base64'));
  writeFileSync(join(dir, 'vault.key'), fileKey.toString('hex'));
  assert.deepEqual(loadVaultKey({ home: dir, envKey: envKey.toString('hex'), credentialsDir: creds }), { key: envKey, source: 'env' });
  assert.deepEqual(loadVaultKey({ home: dir, credentialsDir: creds }), { key: credKey, source: 'credential' });
  assert.deepEqual(loadVaultKey({ home: dir, credentialsDir: join(dir, 'no-such-dir') }), { key: fileKey, source: 'file' });
  assert.throws(() => loadVaultKey({ home: dir, envKey: 'short' }), /SVC_VAULT_KEY: a vault key is 32 bytes/);
});

test('a bad key file is an error, never silently replaced', (t) => {
  const dir = home(t);
  writeFileSync(join(dir, 'vault.key'), 'not a key');
  assert.throws(() => loadVaultKey({ home: dir }), VaultKeyError);
  assert.equal(readFileSync(join(dir, 'vault.key'), 'utf8'), 'not a key');
});

test('the read-only loader (svc doctor) never creates a key', (t) => {
  const dir = home(t);
  assert.equal(loadVaultKeyReadOnly({ home: dir }), null);
  assert.ok(!existsSync(join(dir, 'vault.key')));
  const key = randomBytes(32);
  assert.deepEqual(loadVaultKeyReadOnly({ home: dir, envKey: key.toString('hex') }), { key, source: 'env' });
});
