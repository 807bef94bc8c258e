// toProviderError: the message of a failed call never carries the key in use, in whatever encoding
// the provider echoed it (issue 8 §4), nor anything shaped like a provider key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { scrub, toProviderError } from '../../../daemon/providers/sdk-failure';

const KEY = 'sk-proj/+="\\AbCdEfGh0123456789';

void test('the key in use is removed in every encoding; the class still comes from the facts', () => {
  const body = JSON.stringify({ key: KEY, url: `?api_key=${encodeURIComponent(KEY)}`, b64: Buffer.from(KEY).toString('base64'), masked: `${KEY.slice(0, 8)}...${KEY.slice(-4)}` });
  const err = toProviderError(new Error(`401 ${body}`), { provider: 'oai', keyLabel: 'main', secret: KEY, aborted: null, nowMs: 0 });
  assert.equal(err.provider, 'oai');
  for (const form of [KEY, encodeURIComponent(KEY), JSON.stringify(KEY).slice(1, -1), Buffer.from(KEY).toString('base64'), KEY.slice(0, 8), KEY.slice(-8)]) assert.ok(!err.message.includes(form), `${form} in ${err.message}`);
  assert.match(err.message, /^401 /);
});

void test('property: scrub leaves no 8 characters in a row of the key, and keeps messages under 500 characters', () => {
  fc.assert(
    fc.property(fc.string({ minLength: 8, maxLength: 40, unit: 'grapheme' }), fc.string({ maxLength: 600 }), (key, noise) => {
      const out = scrub(`${noise}${JSON.stringify({ k: key })}${encodeURIComponent(key)}`, key);
      for (let i = 0; i + 8 <= key.length; i++) assert.ok(!out.includes(key.slice(i, i + 8)), `${key.slice(i, i + 8)} in ${out}`);
      assert.ok(out.length <= 500);
    }),
  );
});

void test('anything shaped like a provider key goes even when it is not the key in use', () => {
  assert.equal(scrub('Incorrect API key provided: sk-abc***wxyz.', 'sk-other-key-000'), 'Incorrect API key provided: [REDACTED].');
});
