// The vault on real files: AES-256-GCM round trip across reopen, and the locked state (wrong key or
// corrupt file) that refuses every read and write and never overwrites the file it cannot decrypt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { Vault } from '../../../daemon/vault/vault';
import { AppError } from '../../../daemon/kernel/errors';

function home(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-vault-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function openVault(file: string, key: Buffer): { vault: Vault; decryptErrors: () => number } {
  let errors = 0;
  const vault = new Vault({ file, key, onDecryptError: () => errors++ });
  vault.open();
  return { vault, decryptErrors: () => errors };
}

const isLocked = (err: unknown): boolean => err instanceof AppError && err.code === 'VAULT_LOCKED' && err.status === 503;

test('a missing file is an empty vault; secrets survive a reopen with the same key', (t) => {
  const file = join(home(t), 'vault.json');
  const key = randomBytes(32);
  const first = openVault(file, key).vault;
  assert.deepEqual(first.status(), { state: 'ok', namespaces: 0 });
  first.set('providers', 'openai', 'sk-secret-1');
  first.set('providers', 'anthropic', 'sk-secret-2');
  first.set('webhooks', 'github', 'whsec');
  assert.equal(first.delete('webhooks', 'github'), true);
  assert.equal(first.delete('webhooks', 'github'), false);

  const second = openVault(file, key).vault;
  assert.deepEqual(second.status(), { state: 'ok', namespaces: 1 });
  assert.equal(second.get('providers', 'openai'), 'sk-secret-1');
  assert.deepEqual(second.keys('providers'), ['anthropic', 'openai']);
  assert.deepEqual(second.keys('webhooks'), []);
  assert.deepEqual(second.namespaces(), ['providers'], 'a namespace whose last key went is gone');
  assert.equal(second.get('nope', 'x'), undefined);
});

test('the file is 0600, holds no plaintext, and no temporary file is left behind', (t) => {
  const dir = home(t);
  const file = join(dir, 'vault.json');
  const { vault } = openVault(file, randomBytes(32));
  for (let i = 0; i < 5; i++) vault.set('providers', `key${i}`, `plaintext-secret-${i}`);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.doesNotMatch(readFileSync(file, 'utf8'), /plaintext-secret|providers|key0/);
  assert.deepEqual(readdirSync(dir), ['vault.json']);
  const envelope = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(envelope).sort(), ['alg', 'data', 'format', 'iv', 'tag', 'version']);
  assert.equal(envelope.alg, 'aes-256-gcm');
});

test('a wrong key locks the vault: reads and writes fail with VAULT_LOCKED, the file is never rewritten', (t) => {
  const file = join(home(t), 'vault.json');
  openVault(file, randomBytes(32)).vault.set('providers', 'openai', 'sk-1');
  const bytes = readFileSync(file);

  const { vault, decryptErrors } = openVault(file, randomBytes(32));
  const status = vault.status();
  assert.equal(status.state, 'locked');
  assert.match(status.state === 'locked' ? status.reason : '', /wrong key or corrupt file/);
  assert.equal(decryptErrors(), 1);
  assert.throws(() => vault.get('providers', 'openai'), isLocked);
  assert.throws(() => vault.keys('providers'), isLocked);
  assert.throws(() => vault.set('providers', 'openai', 'overwrite'), isLocked);
  assert.throws(() => vault.delete('providers', 'openai'), isLocked);
  assert.deepEqual(readFileSync(file), bytes);
});

test('the right key recovers everything after a locked start', (t) => {
  const file = join(home(t), 'vault.json');
  const key = randomBytes(32);
  openVault(file, key).vault.set('oauth', 'google', 'refresh-token');
  openVault(file, randomBytes(32));
  assert.equal(openVault(file, key).vault.get('oauth', 'google'), 'refresh-token');
});

test('a corrupt file locks the vault too, whatever the damage', (t) => {
  const dir = home(t);
  const key = randomBytes(32);
  const good = join(dir, 'good.json');
  openVault(good, key).vault.set('providers', 'x', 'y');
  const envelope = JSON.parse(readFileSync(good, 'utf8')) as Record<string, string>;
  const flipped = Buffer.from(envelope.data!, 'base64');
  flipped[0] = flipped[0]! ^ 1;
  const damaged: Record<string, string> = {
    'not JSON': '{"format": "svc-vault", ',
    'unknown format': JSON.stringify({ ...envelope, format: 'other' }),
    'newer version': JSON.stringify({ ...envelope, version: 2 }),
    'flipped ciphertext bit': JSON.stringify({ ...envelope, data: flipped.toString('base64') }),
    'wrong tag': JSON.stringify({ ...envelope, tag: Buffer.alloc(16).toString('base64') }),
    empty: '',
  };
  for (const [what, text] of Object.entries(damaged)) {
    const file = join(dir, 'vault.json');
    writeFileSync(file, text);
    const { vault, decryptErrors } = openVault(file, key);
    assert.equal(vault.status().state, 'locked', what);
    assert.equal(decryptErrors(), 1, what);
    assert.throws(() => vault.set('a', 'b', 'c'), isLocked, what);
    assert.equal(readFileSync(file, 'utf8'), text, what);
  }
});

test('a write that cannot be persisted leaves the in-memory vault unchanged', (t) => {
  const dir = home(t);
  const file = join(dir, 'sub', 'vault.json');
  const { vault } = openVault(file, randomBytes(32));
  assert.throws(() => vault.set('providers', 'openai', 'sk'), /ENOENT/);
  assert.equal(vault.get('providers', 'openai'), undefined);
});

test('only 32-byte keys are accepted', () => {
  assert.throws(() => new Vault({ file: '/nonexistent', key: randomBytes(16), onDecryptError: () => undefined }), /32 bytes/);
});

test('the revision moves on open, set and delete, and only then (the scrubber rebuilds on it)', (t) => {
  const { vault } = openVault(join(home(t), 'vault.json'), randomBytes(32));
  const r0 = vault.revision();
  vault.get('providers', 'x');
  vault.keys('providers');
  assert.equal(vault.revision(), r0, 'reads change nothing');
  vault.set('providers', 'oai:main', 'sk-one-0123456789');
  const r1 = vault.revision();
  assert.ok(r1 > r0);
  assert.equal(vault.delete('providers', 'missing'), false);
  assert.equal(vault.revision(), r1, 'deleting nothing changes nothing');
  vault.delete('providers', 'oai:main');
  assert.ok(vault.revision() > r1);
  const r2 = vault.revision();
  vault.open();
  assert.ok(vault.revision() > r2, 'a reopen may bring other secrets (svc key recover)');
});
