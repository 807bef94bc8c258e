import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encodePairUrl, PAIR_KINDS, PairPayloadError, parsePairUrl, type PairPayload } from '../../mesh/pair-payload';
import { newPairToken } from '../../mesh/pair-token';

const payload = (over: Partial<PairPayload> = {}): PairPayload => ({
  v: 1,
  kind: 'phone',
  brain_id: '3f2b1c4d-1111-4222-8333-444455556666',
  token: newPairToken(),
  expires_at: 1_767_000_600,
  pin_required: true,
  urls: ['http://192.168.1.20:9090', 'https://pi.tailnet.ts.net'],
  mdns: 'pi.local:9090',
  ...over,
});

void test('the pair URL round-trips and reads as svc://pair?…', () => {
  const p = payload();
  const url = encodePairUrl(p);
  assert.match(url, /^svc:\/\/pair\?v=1&kind=phone&brain=/);
  assert.deepEqual(parsePairUrl(url), p);
  assert.deepEqual(parsePairUrl(encodePairUrl(payload({ mdns: null, pin_required: false }))).mdns, null);
  // Kind brain: the minting brain's sync key fingerprint travels as `key`.
  const brain = payload({ kind: 'brain', key: 'pASzN1sXn7eo2f_KhhmB_D_MOntAlqaR2Xa8cThXL1Q' });
  assert.match(encodePairUrl(brain), /&key=pASzN1sXn7eo2f_KhhmB_D_MOntAlqaR2Xa8cThXL1Q/);
  assert.deepEqual(parsePairUrl(encodePairUrl(brain)), brain);
  assert.equal('key' in parsePairUrl(encodePairUrl(payload())), false, 'absent when not given');
});

void test('property: any payload round-trips; any string either parses or is a PairPayloadError', () => {
  const arb = fc.record({
    kind: fc.constantFrom(...PAIR_KINDS),
    exp: fc.integer({ min: 0, max: 999_999_999_999 }),
    pin: fc.boolean(),
    urls: fc.array(fc.webUrl({ withQueryParameters: false, withFragments: false }).filter((u) => !u.includes('@')), { minLength: 1, maxLength: 8 }),
  });
  fc.assert(
    fc.property(arb, ({ kind, exp, pin, urls }) => {
      const p = payload({ kind, expires_at: exp, pin_required: pin, urls });
      assert.deepEqual(parsePairUrl(encodePairUrl(p)), p);
    }),
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 300 }), (s) => {
      for (const text of [s, `svc://pair?${s}`]) {
        try {
          parsePairUrl(text);
        } catch (err) {
          assert.ok(err instanceof PairPayloadError, String(err));
        }
      }
    }),
  );
});

void test('bad pair URLs are refused with what is wrong', () => {
  const good = new URL(encodePairUrl(payload()).replace('svc://', 'http://'));
  const variant = (f: (q: URLSearchParams) => void): string => {
    const q = new URLSearchParams(good.search);
    f(q);
    return `svc://pair?${q.toString()}`;
  };
  for (const [text, why] of [
    [variant((q) => q.set('v', '2')), /version/],
    [variant((q) => q.set('kind', 'toaster')), /kind/],
    [variant((q) => q.set('token', 'svcdk_x')), /token/],
    [variant((q) => q.append('token', 'x')), /exactly one token/],
    [variant((q) => q.set('exp', '-1')), /exp/],
    [variant((q) => q.set('url', 'ftp://x')), /http/],
    [variant((q) => q.set('url', 'http://h/?a=1')), /plain/],
    [variant((q) => q.set('mdns', 'pi.lan:1')), /mdns/],
    [variant((q) => q.set('key', 'short')), /key/],
    [variant((q) => (q.append('key', 'a'.repeat(43)), q.append('key', 'b'.repeat(43)))), /key/],
    [variant((q) => (q.delete('url'), q.delete('mdns'))), /no address/],
    ['https://evil.example/pair?x', /starts with/],
    [`svc://pair?${'a'.repeat(2000)}`, /at most/],
  ] as const) assert.throws(() => parsePairUrl(text), why);
});
