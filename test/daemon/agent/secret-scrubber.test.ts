// Property: whatever a tool returns, no vault secret survives scrubbing (spec 1.11).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SecretScrubber, REDACTED, vaultSecrets } from '../../../daemon/agent/tools/secret-scrubber';

const strings = (v: unknown, out: string[] = []): string[] => {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      strings(x, out);
    }
  }
  return out;
};

void test('no secret survives in any string (key or value) of any JSON value', () => {
  const secret = fc.stringMatching(/^[A-Za-z0-9_-]{8,24}$/);
  fc.assert(
    fc.property(fc.array(secret, { minLength: 1, maxLength: 4 }), fc.jsonValue(), fc.nat(), fc.string(), (secrets, value, pick, noise) => {
      const s = secrets[pick % secrets.length]!;
      const scrubbed = new SecretScrubber(() => secrets).scrubValue({ value, leak: `${noise}${s}${noise}${s}`, [s]: [s, { [noise]: s }] });
      for (const text of strings(scrubbed)) for (const x of secrets) assert.ok(!text.includes(x), `${x} leaked in ${text}`);
    }),
  );
});

void test('short values are not treated as secrets; new secrets apply without a restart', () => {
  let secrets = ['1234'];
  const scrubber = new SecretScrubber(() => secrets);
  assert.equal(scrubber.scrub('pin 1234'), 'pin 1234');
  secrets = ['sk-abcdefgh1234'];
  assert.equal(scrubber.scrub('key sk-abcdefgh1234!'), `key ${REDACTED}!`);
});

void test('vaultSecrets yields every value of every namespace, including ones added later, and nothing from a locked vault', () => {
  const data: Record<string, Record<string, string>> = { providers: { 'openai:default': 'sk-one-1234567' }, webhooks: { w1: 'whsec-abcdefgh' }, 'a-future-feature': { t: 'token-99887766' } };
  const vault = { namespaces: () => Object.keys(data), keys: (ns: string) => Object.keys(data[ns] ?? {}), get: (ns: string, k: string) => data[ns]?.[k], status: () => ({ state: 'ok' }) };
  assert.deepEqual([...vaultSecrets(vault, ['api-token-xyz'])()].sort(), ['api-token-xyz', 'sk-one-1234567', 'token-99887766', 'whsec-abcdefgh']);
  assert.deepEqual([...vaultSecrets({ ...vault, status: () => ({ state: 'locked' }) })()], []);
});
