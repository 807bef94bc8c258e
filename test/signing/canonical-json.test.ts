// RFC 8785 canonical JSON: the RFC's own examples (section 3.2.2 serialisation, 3.2.3 key order by
// UTF-16 code units, appendix B numbers), refusal of every value JSON cannot represent with where it is,
// and properties over arbitrary JSON values: canonical JSON is a fixed point of parse-and-canonicalise,
// and key order never matters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson, CanonicalJsonError } from '../../signing/canonical-json';

/** The double whose IEEE 754 bits are `hex`. */
const double = (hex: string): number => Buffer.from(hex, 'hex').readDoubleBE(0);

void test('RFC 8785 appendix B: numbers serialise as ECMAScript does', () => {
  const cases: [string, string][] = [
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ];
  for (const [bits, text] of cases) assert.equal(canonicalJson(double(bits)), text, bits);
  assert.equal(canonicalJson(1e-7), '1e-7');
  assert.equal(canonicalJson(-0), '0');
  for (const bits of ['7fffffffffffffff', '7ff0000000000000', 'fff0000000000000']) assert.throws(() => canonicalJson(double(bits)), CanonicalJsonError, bits);
});

void test('RFC 8785 section 3.2.2: whitespace, literals, numbers and string escapes', () => {
  const input = JSON.parse(String.raw`{
    "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
    "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
    "literals": [null, true, false]
  }`) as unknown;
  const expected = String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`;
  assert.equal(canonicalJson(input), expected);
});

void test('RFC 8785 section 3.2.3: keys sort by UTF-16 code units ("\\r" before "1" before "\\u0080" … "\\u20ac" before an emoji before "\\ufb33")', () => {
  const input = JSON.parse(String.raw`{
    "\u20ac": "Euro Sign",
    "\r": "Carriage Return",
    "\ufb33": "Hebrew Letter Dalet With Dagesh",
    "1": "One",
    "\ud83d\ude00": "Emoji: Grinning Face",
    "\u0080": "Control",
    "\u00f6": "Latin Small Letter O With Diaeresis"
  }`) as Record<string, string>;
  // The serialised order (JSON.parse would put the integer-like key "1" first again).
  const serialised = [...canonicalJson(input).matchAll(/:"([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(serialised, ['Carriage Return', 'One', 'Control', 'Latin Small Letter O With Diaeresis', 'Euro Sign', 'Emoji: Grinning Face', 'Hebrew Letter Dalet With Dagesh']);
});

void test('what JSON cannot represent is refused with where it is, never dropped or turned into null', () => {
  const sparse: unknown[] = [1];
  sparse[2] = 3;
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = { back: cyclic };
  const cases: [unknown, string][] = [
    [undefined, ''],
    [{ a: undefined }, '/a'],
    [[1, undefined], '/1'],
    [{ f: () => 1 }, '/f'],
    [{ n: Number.NaN }, '/n'],
    [{ deep: [{ n: Number.POSITIVE_INFINITY }] }, '/deep/0/n'],
    [{ b: 1n }, '/b'],
    [{ s: Symbol('x') }, '/s'],
    [{ s: 'a\ud800b' }, '/s'],
    [{ s: '\udc00' }, '/s'],
    [{ 'k\ud83d': 1 }, '/k\ud83d'],
    [{ when: new Date(0) }, '/when'],
    [{ m: new Map() }, '/m'],
    [{ 'a/b~c': new Set() }, '/a~1b~0c'],
    [sparse, '/1'],
    [cyclic, '/self/back'],
    [{ [Symbol('k')]: 1 }, ''],
  ];
  for (const [value, path] of cases) {
    assert.throws(() => canonicalJson(value), (err: unknown) => err instanceof CanonicalJsonError && err.path === path, `${String(path)}`);
  }
});

void test('a shared (not circular) subtree, a null-prototype object and a well-formed emoji are fine', () => {
  const shared = { x: 1 };
  const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 2, a: 1 });
  assert.equal(canonicalJson({ p: shared, q: [shared] }), '{"p":{"x":1},"q":[{"x":1}]}');
  assert.equal(canonicalJson(bare), '{"a":1,"b":2}');
  assert.equal(canonicalJson('\ud83d\ude00'), '"😀"');
});

void test('deep nesting does not overflow the call stack', () => {
  let deep: unknown = 0;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.equal(canonicalJson(deep).length, 200_001);
});

/** `value` with every object's keys in a shuffled insertion order. */
function reorder(value: unknown, pick: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => reorder(v, pick));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(() => pick() - 0.5);
  return Object.fromEntries(entries.map(([k, v]) => [k, reorder(v, pick)]));
}

void test('property: canonical JSON is a fixed point of parse-and-canonicalise, and parses back to the value', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const text = canonicalJson(value);
      assert.equal(canonicalJson(JSON.parse(text)), text);
      assert.deepEqual(JSON.parse(text), JSON.parse(JSON.stringify(value)));
    }),
    { numRuns: 500 },
  );
});

void test('property: key order and whitespace never change the canonical form', () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.integer(), fc.integer({ min: 0, max: 4 }), (value, seed, indent) => {
      let state = seed;
      const pick = (): number => ((state = (state * 1103515245 + 12345) | 0) >>> 0) / 2 ** 32;
      const respelled = JSON.parse(JSON.stringify(reorder(value, pick), null, indent)) as unknown;
      assert.equal(canonicalJson(respelled), canonicalJson(value));
    }),
    { numRuns: 500 },
  );
});
