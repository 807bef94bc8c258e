// Brain keys: raw 32-byte base64url keys that round-trip through node:crypto, fingerprints, and
// signatures that verify only with the right key over the same text; nothing a peer sends (a malformed
// key or signature) makes verification throw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { freshNonce, generateKeypair, identityOf, isRawKey, keyFingerprint, signText, SyncKeyError, verifyText } from '../../sync/identity-keys';

const BRAIN = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';

void test('a keypair is two raw 32-byte keys, and the identity refuses a public key that is not its private key\'s', () => {
  const pair = generateKeypair();
  assert.ok(isRawKey(pair.publicKey) && isRawKey(pair.privateKey));
  assert.equal(Buffer.from(pair.publicKey, 'base64url').length, 32);
  const identity = identityOf(BRAIN, pair);
  assert.equal(identity.publicKey, pair.publicKey);
  assert.throws(() => identityOf(BRAIN, { publicKey: generateKeypair().publicKey, privateKey: pair.privateKey }), SyncKeyError);
  assert.throws(() => identityOf(BRAIN, { publicKey: 'short', privateKey: pair.privateKey }), SyncKeyError);
});

void test('fingerprints are the SHA-256 of the raw key; nonces are fresh 32-byte strings', () => {
  const { publicKey } = generateKeypair();
  assert.match(keyFingerprint(publicKey), /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(keyFingerprint(publicKey), keyFingerprint(generateKeypair().publicKey));
  const nonces = new Set(Array.from({ length: 100 }, freshNonce));
  assert.equal(nonces.size, 100);
  for (const n of nonces) assert.ok(isRawKey(n));
});

void test('property: a signature verifies with its key over its text only', () => {
  const me = identityOf(BRAIN, generateKeypair());
  const other = generateKeypair().publicKey;
  fc.assert(
    fc.property(fc.string(), fc.string(), (text, otherText) => {
      const sig = signText(me, text);
      assert.ok(verifyText(me.publicKey, text, sig));
      assert.equal(verifyText(other, text, sig), false);
      if (otherText !== text) assert.equal(verifyText(me.publicKey, otherText, sig), false);
    }),
    { numRuns: 50 },
  );
});

void test('property: any key and signature strings verify false or true, never throw', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.uint8Array({ minLength: 32, maxLength: 32 }).map((u) => Buffer.from(u).toString('base64url'))), fc.oneof(fc.string(), fc.uint8Array({ minLength: 64, maxLength: 64 }).map((u) => Buffer.from(u).toString('base64url'))), (key, sig) => {
      assert.equal(typeof verifyText(key, 'text', sig), 'boolean');
    }),
    { numRuns: 200 },
  );
});
