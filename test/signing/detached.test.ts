// Detached signatures of registry downloads: sign then verify; tampered bytes, a changed digest or
// signature, a key nobody pinned, another key, and a manifest signature of the same key are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { ARTIFACT_REFUSAL_REASONS } from '../../protocol/signing';
import { keyIdOf, rawPublicKey, SigningKeyError } from '../../signing/ed25519';
import { ARTIFACT_CONTEXT, signArtifact, verifyArtifact } from '../../signing/detached';
import { signManifest, type PinnedKeys } from '../../signing/signed-manifest';

const newKey = (): { keyId: string; publicKey: string; privateKey: ReturnType<typeof generateKeyPairSync>['privateKey'] } => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const publicKey = rawPublicKey(privateKey);
  return { keyId: keyIdOf(publicKey), publicKey, privateKey };
};
const KEY = newKey();
const OTHER = newKey();
const pins = (...keys: { keyId: string; publicKey: string }[]): PinnedKeys => (id) => keys.find((k) => k.keyId === id)?.publicKey;
const reasonOf = (v: ReturnType<typeof verifyArtifact>): string | undefined => (v.ok ? undefined : v.reason);
const TARBALL = randomBytes(64 * 1024);

void test('a detached signature verifies against the pinned key and names the digest it covers', () => {
  const detached = signArtifact(TARBALL, KEY);
  assert.equal(detached.sha256, createHash('sha256').update(TARBALL).digest('hex'));
  assert.equal(detached.key_id, KEY.keyId);
  assert.equal(ARTIFACT_CONTEXT, 'svc-artifact-v1');
  assert.deepEqual(verifyArtifact(TARBALL, JSON.parse(JSON.stringify(detached)), pins(KEY)), { ok: true, keyId: KEY.keyId, sha256: detached.sha256 });
});

void test('property: tampered bytes are refused (digest_mismatch), and so is a signature re-pointed at their digest', () => {
  const detached = signArtifact(TARBALL, KEY);
  fc.assert(
    fc.property(fc.nat({ max: TARBALL.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, flip) => {
      const tampered = Buffer.from(TARBALL);
      tampered[at]! ^= flip;
      assert.equal(reasonOf(verifyArtifact(tampered, detached, pins(KEY))), 'digest_mismatch');
      const repointed = { ...detached, sha256: createHash('sha256').update(tampered).digest('hex') };
      assert.equal(reasonOf(verifyArtifact(tampered, repointed, pins(KEY))), 'signature_mismatch');
    }),
    { numRuns: 200 },
  );
  assert.equal(reasonOf(verifyArtifact(TARBALL.subarray(1), detached, pins(KEY))), 'digest_mismatch', 'a truncated download');
});

void test('another key, a key nobody pinned, and a manifest signature of the same key are refused', () => {
  const byOther = signArtifact(TARBALL, { keyId: KEY.keyId, privateKey: OTHER.privateKey });
  assert.equal(reasonOf(verifyArtifact(TARBALL, byOther, pins(KEY))), 'signature_mismatch');
  assert.equal(reasonOf(verifyArtifact(TARBALL, signArtifact(TARBALL, OTHER), pins(KEY))), 'unknown_key');
  const sha256 = createHash('sha256').update(TARBALL).digest('hex');
  // The same key signed a manifest whose canonical JSON someone hopes to pass off as a download.
  const envelope = signManifest({ sha256 }, KEY);
  assert.equal(reasonOf(verifyArtifact(TARBALL, { alg: 'ed25519', sha256, key_id: KEY.keyId, sig: envelope.signature }, pins(KEY))), 'signature_mismatch');
});

void test('what is not a detached signature is malformed; a damaged pin is the host\'s error', () => {
  const detached = signArtifact(TARBALL, KEY);
  for (const c of [null, {}, { ...detached, alg: 'rsa' }, { ...detached, sha256: detached.sha256.toUpperCase() }, { ...detached, sig: 'AAAA' }, { ...detached, extra: 1 }]) {
    assert.equal(reasonOf(verifyArtifact(TARBALL, c, pins(KEY))), 'malformed', JSON.stringify(c));
  }
  assert.throws(() => verifyArtifact(TARBALL, detached, () => 'AAAA'), SigningKeyError);
  assert.deepEqual([...ARTIFACT_REFUSAL_REASONS].sort(), ['digest_mismatch', 'malformed', 'signature_mismatch', 'unknown_key']);
});
