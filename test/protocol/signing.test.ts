// The signing contract: the base64 patterns match exactly the padded standard base64 of 32 and 64
// bytes, and the refusal reasons include the two spec 7 names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { B64_32_PATTERN, B64_64_PATTERN, KEY_ID_PATTERN, MANIFEST_REFUSAL_REASONS } from '../../protocol/signing';

void test('the key and signature patterns fit padded standard base64 of 32 and 64 bytes only', () => {
  const key = randomBytes(32);
  const signature = randomBytes(64);
  assert.match(key.toString('base64'), new RegExp(B64_32_PATTERN));
  assert.match(signature.toString('base64'), new RegExp(B64_64_PATTERN));
  assert.doesNotMatch(key.toString('base64url'), new RegExp(B64_32_PATTERN));
  assert.doesNotMatch(randomBytes(33).toString('base64'), new RegExp(B64_32_PATTERN));
  assert.doesNotMatch(signature.toString('base64'), new RegExp(B64_32_PATTERN));
});

void test('key ids are short, typeable names; spec 7 reasons are among the refusals', () => {
  const id = new RegExp(KEY_ID_PATTERN);
  for (const ok of ['Xy3_-abcdEFGH1234', 'acme.release:2026', '0f3a9c']) assert.match(ok, id);
  for (const no of ['', 'a b', 'a/b', '-flag', '.hidden', 'x'.repeat(65)]) assert.doesNotMatch(no, id);
  for (const reason of ['signature_mismatch', 'key_mismatch']) assert.ok((MANIFEST_REFUSAL_REASONS as readonly string[]).includes(reason));
});
