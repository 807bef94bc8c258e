// Publisher-key Ed25519 helpers: only canonical base64 of the right size decodes, a key id is derived
// from the public key, a private key must belong to its public key, and a point off the curve is no key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import fc from 'fast-check';
import { decodeRaw, keyIdOf, privateKeyOf, publicKeyOf, rawPrivateKey, rawPublicKey, signMessage, SigningKeyError, verifyMessage } from '../../signing/ed25519';

const pair = (): { publicKey: string; privateKey: string } => {
  const { privateKey } = generateKeyPairSync('ed25519');
  return { publicKey: rawPublicKey(privateKey), privateKey: rawPrivateKey(privateKey) };
};

void test('property: only the one canonical base64 spelling of 32 or 64 bytes decodes', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 0, maxLength: 80 }), fc.nat(), (bytes, bit) => {
      const text = Buffer.from(bytes).toString('base64');
      const size = bytes.length === 32 ? 32 : 64;
      assert.equal(decodeRaw(text, size)?.equals(bytes) ?? false, bytes.length === size);
      if (bytes.length !== 32 && bytes.length !== 64) return;
      // Flip a spare bit of the last data character: the same bytes, another spelling.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
      const last = text.replace(/=+$/, '').length - 1;
      const spareBits = bytes.length === 32 ? 2 : 4;
      const respelled = `${text.slice(0, last)}${alphabet[alphabet.indexOf(text[last]!) ^ (1 << (bit % spareBits))]!}${text.slice(last + 1)}`;
      assert.ok(Buffer.from(respelled, 'base64').equals(bytes));
      assert.equal(decodeRaw(respelled, size), undefined);
      assert.equal(decodeRaw(text.replace(/\+/g, '-').replace(/\//g, '_'), size)?.equals(bytes) ?? false, !/[+/]/.test(text), 'base64url is another encoding');
    }),
  );
});

void test('the key id is the first 24 hex digits of the SHA-256 of the raw public key', () => {
  const { publicKey } = pair();
  assert.equal(keyIdOf(publicKey), createHash('sha256').update(Buffer.from(publicKey, 'base64')).digest('hex').slice(0, 24));
  assert.throws(() => keyIdOf('AAAA'), SigningKeyError);
});

void test('a private key must belong to its public key; signatures verify only under it', () => {
  const a = pair();
  const b = pair();
  const key = privateKeyOf(a.publicKey, a.privateKey);
  assert.throws(() => privateKeyOf(b.publicKey, a.privateKey), SigningKeyError);
  assert.throws(() => privateKeyOf(a.publicKey, 'short'), SigningKeyError);
  const signature = signMessage(key, 'hello');
  assert.equal(verifyMessage(publicKeyOf(a.publicKey)!, 'hello', signature), true);
  assert.equal(verifyMessage(publicKeyOf(a.publicKey)!, 'hello!', signature), false);
  assert.equal(verifyMessage(publicKeyOf(b.publicKey)!, 'hello', signature), false);
  assert.equal(verifyMessage(publicKeyOf(a.publicKey)!, 'hello', 'not a signature'), false);
});

void test('32 bytes that are no curve point import, and verify nothing', () => {
  const offCurve = Buffer.alloc(32);
  offCurve[0] = 2;
  const { privateKey } = generateKeyPairSync('ed25519');
  assert.equal(verifyMessage(publicKeyOf(offCurve.toString('base64'))!, 'hello', signMessage(privateKey, 'hello')), false);
  assert.equal(publicKeyOf('AAAA'), undefined);
});

void test('the small-order points are no public key: under them a forged signature verifies without any private key', () => {
  const smallOrder = [
    '0100000000000000000000000000000000000000000000000000000000000000',
    '0100000000000000000000000000000000000000000000000000000000000080',
    'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
    'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
    '0000000000000000000000000000000000000000000000000000000000000000',
    '0000000000000000000000000000000000000000000000000000000000000080',
    'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
    'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
    'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
    'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
    '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
    '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
    'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
    'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
  ];
  // R = the identity, S = 0: valid under a key of order n for every message whose hash is a multiple of n.
  const forged = Buffer.concat([Buffer.from(`01${'00'.repeat(31)}`, 'hex'), Buffer.alloc(32)]);
  for (const hex of smallOrder) {
    const raw = Buffer.from(hex, 'hex');
    const imported = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
    const accepted = Array.from({ length: 64 }, (_, i) => verify(null, Buffer.from(`message ${i}`), imported, forged)).filter(Boolean).length;
    assert.ok(accepted > 0, `${hex}: node:crypto accepts the forgery for some message`);
    assert.equal(publicKeyOf(raw.toString('base64')), undefined, hex);
  }
});
