// manifest.signed.json: sign then verify; a respelled manifest (key order, whitespace) still verifies;
// every one-character change of the manifest, key id, public key or signature is refused with its
// reason (fast-check over mutations of the file's text); a key other than the pinned one, and a
// signature made for another use of the same key, are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { MANIFEST_REFUSAL_REASONS } from '../../protocol/signing';
import { canonicalJson, CanonicalJsonError } from '../../signing/canonical-json';
import { keyIdOf, rawPublicKey, signMessage, SigningKeyError, type SigningKey } from '../../signing/ed25519';
import { signArtifact, artifactMessage } from '../../signing/detached';
import { signManifest, verifySignedManifest, verifySignedManifestText, type Manifest, type PinnedKeys } from '../../signing/signed-manifest';

const newKey = (): SigningKey & { publicKey: string } => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const publicKey = rawPublicKey(privateKey);
  return { keyId: keyIdOf(publicKey), publicKey, privateKey };
};
const pins = (...keys: { keyId: string; publicKey: string }[]): PinnedKeys => (id) => keys.find((k) => k.keyId === id)?.publicKey;

const MANIFEST: Manifest = {
  name: 'Kitchen timer',
  version: '1.2.0',
  permissions: { network: ['api.example.org'], justification: '' },
  skill_dependencies: [{ id: 'timers', version: '^1' }],
  contract: { manifest_schema_version: '1', a2ui_version: '0.8' },
  surfaces: [{ id: 'main', schema_version: '2', action_contract: { start: { seconds: 'number' } } }],
  note: 'Grüße € 😀',
};

const KEY = newKey();
const OTHER = newKey();

void test('a signed manifest verifies against its pinned key, and the envelope has the fields of spec 2.1', () => {
  const envelope = signManifest(MANIFEST, KEY, new Date('2026-11-25T08:00:00Z'));
  assert.deepEqual(Object.keys(envelope).sort(), ['alg', 'key_id', 'manifest', 'public_key', 'signature', 'signed_at']);
  assert.equal(envelope.alg, 'ed25519');
  assert.equal(envelope.signed_at, '2026-11-25T08:00:00.000Z');
  assert.equal(envelope.public_key, KEY.publicKey);
  const verdict = verifySignedManifest(JSON.parse(JSON.stringify(envelope)), pins(KEY));
  assert.deepEqual(verdict, { ok: true, manifest: MANIFEST, keyId: KEY.keyId, signedAt: '2026-11-25T08:00:00.000Z' });
});

void test('the signature is Ed25519 over the canonical JSON of the manifest and nothing else (spec 2.1, 5.1)', () => {
  const envelope = signManifest(MANIFEST, KEY);
  // What any other implementation of the spec would sign: it verifies here, and ours verifies there.
  assert.equal(envelope.signature, signMessage(KEY.privateKey, canonicalJson(MANIFEST)));
});

void test('key order and whitespace of manifest.signed.json do not matter: the manifest is canonicalised', () => {
  const envelope = signManifest(MANIFEST, KEY);
  const reversed = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(reversed) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversed(x)])) : v;
  const text = JSON.stringify(reversed(envelope), null, 4).replace(/"version": "1.2.0"/, '"version":\t"1.2.0"');
  assert.equal(verifySignedManifestText(text, pins(KEY)).ok, true);
  // 4.50 and 4.5 are one number: the canonical form decides, not the spelling.
  const withNumber = signManifest({ ...MANIFEST, ratio: 4.5 }, KEY);
  assert.equal(verifySignedManifestText(JSON.stringify(withNumber).replace('"ratio":4.5', '"ratio":4.50'), pins(KEY)).ok, true);
});

void test('a key id nobody pinned, a public key other than the pinned one, and another key\'s signature are refused', () => {
  const envelope = signManifest(MANIFEST, KEY);
  assert.equal(reasonOf(verifySignedManifest(envelope, pins(OTHER))), 'unknown_key');
  // The envelope names the pinned key id but carries (and is signed by) another key.
  const impostor = signManifest(MANIFEST, { keyId: KEY.keyId, privateKey: OTHER.privateKey });
  assert.equal(reasonOf(verifySignedManifest(impostor, pins(KEY))), 'key_mismatch');
  // …or carries the pinned public key with another key's signature.
  assert.equal(reasonOf(verifySignedManifest({ ...impostor, public_key: KEY.publicKey }, pins(KEY))), 'signature_mismatch');
  // A key id pinned to another key.
  assert.equal(reasonOf(verifySignedManifest(envelope, () => OTHER.publicKey)), 'key_mismatch');
});

void test('a signature the same key made for another use never verifies as a manifest signature', () => {
  const manifest = { sha256: 'a'.repeat(64) };
  const detached = signArtifact(Buffer.from('tarball'), KEY);
  const asEnvelope = { ...signManifest(manifest, KEY), signature: detached.sig };
  assert.equal(reasonOf(verifySignedManifest(asEnvelope, pins(KEY))), 'signature_mismatch');
  const contextual = { ...signManifest(manifest, KEY), signature: signMessage(KEY.privateKey, artifactMessage('a'.repeat(64))) };
  assert.equal(reasonOf(verifySignedManifest(contextual, pins(KEY))), 'signature_mismatch');
});

void test('what is not a signed manifest is malformed: not JSON, missing or extra fields, another alg, non-canonical base64', () => {
  const envelope = signManifest(MANIFEST, KEY);
  const text = JSON.stringify(envelope);
  // The last character before "==" carries four spare bits: flip one and the bytes are the same.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const spare = alphabet[alphabet.indexOf(envelope.signature.at(-3)!) ^ 1]!;
  const respelled = `${envelope.signature.slice(0, -3)}${spare}==`;
  assert.ok(Buffer.from(respelled, 'base64').equals(Buffer.from(envelope.signature, 'base64')), 'the same bytes');
  const cases: unknown[] = [
    null,
    [],
    'manifest',
    { ...envelope, alg: 'rsa' },
    { ...envelope, extra: 1 },
    { ...envelope, manifest: [] },
    { ...envelope, manifest: { s: '\ud800' } },
    { ...envelope, signature: envelope.signature.replace(/==$/, '') },
    { ...envelope, signature: respelled },
    Object.fromEntries(Object.entries(envelope).filter(([k]) => k !== 'signed_at')),
  ];
  for (const c of cases) assert.equal(reasonOf(verifySignedManifest(c, pins(KEY))), 'malformed', JSON.stringify(c));
  assert.equal(reasonOf(verifySignedManifestText(text.slice(0, -1), pins(KEY))), 'malformed');
});

void test('a pinned key that is not an Ed25519 key is the host\'s error, not a verdict', () => {
  assert.throws(() => verifySignedManifest(signManifest(MANIFEST, KEY), () => 'not a key'), SigningKeyError);
});

void test('a manifest JSON cannot represent is refused at signing', () => {
  assert.throws(() => signManifest({ a: undefined }, KEY), CanonicalJsonError);
  assert.throws(() => signManifest([] as unknown as Manifest, KEY), CanonicalJsonError);
});

/** Each text mutation of the file, and the reasons it may be refused with. */
const FIELD_REASONS: Record<string, readonly string[]> = {
  // A changed manifest value breaks the signature; a change that breaks the JSON or the schema is malformed.
  manifest: ['signature_mismatch', 'malformed'],
  signature: ['signature_mismatch', 'malformed'],
  key_id: ['unknown_key', 'malformed'],
  public_key: ['key_mismatch', 'malformed'],
};

void test('property: any one-character change in the manifest, signature, key id or public key is refused with its reason', () => {
  const envelope = signManifest(MANIFEST, KEY);
  const text = JSON.stringify(envelope);
  const spans = Object.keys(FIELD_REASONS).map((field) => ({ field, ...spanOf(text, field) }));
  fc.assert(
    fc.property(fc.constantFrom(...spans), fc.nat(), fc.integer({ min: 0x20, max: 0x7e }), ({ field, start, end }, offset, code) => {
      const at = start + (offset % (end - start));
      fc.pre(text.charCodeAt(at) !== code);
      const mutated = `${text.slice(0, at)}${String.fromCharCode(code)}${text.slice(at + 1)}`;
      fc.pre(!respellsOnly(text, mutated));
      const verdict = verifySignedManifestText(mutated, pins(KEY, OTHER));
      assert.equal(verdict.ok, false, `${field} at ${at}: ${mutated}`);
      assert.ok(FIELD_REASONS[field]!.includes(reasonOf(verdict)!), `${field}: ${reasonOf(verdict)}`);
    }),
    { numRuns: 2000 },
  );
});

void test('every refusal reason is reachable and in the protocol list', () => {
  assert.deepEqual([...MANIFEST_REFUSAL_REASONS].sort(), ['key_mismatch', 'malformed', 'signature_mismatch', 'unknown_key']);
});

const reasonOf = (verdict: ReturnType<typeof verifySignedManifest>): string | undefined => (verdict.ok ? undefined : verdict.reason);

/** Where the value of top-level `field` is in the compact JSON `text` (quotes of a string excluded). */
function spanOf(text: string, field: string): { start: number; end: number } {
  const key = `"${field}":`;
  const start = text.indexOf(key) + key.length;
  const value = JSON.stringify((JSON.parse(text) as Record<string, unknown>)[field]);
  const quoted = value.startsWith('"') ? 1 : 0;
  return { start: start + quoted, end: start + value.length - quoted };
}

/**
 * Whether `mutated` is the same document as `text` up to JSON spelling (a space where whitespace is
 * allowed, an escape that decodes to the same character): such a change must still verify.
 */
function respellsOnly(text: string, mutated: string): boolean {
  try {
    return canonicalJson(JSON.parse(mutated)) === canonicalJson(JSON.parse(text));
  } catch (err) {
    if (err instanceof SyntaxError || err instanceof CanonicalJsonError) return false;
    throw err;
  }
}
