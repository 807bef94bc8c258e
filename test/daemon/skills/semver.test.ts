// daemon/skills/semver.ts: Semantic Versioning 2.0.0 precedence (semver.org §11) — the spec's example
// chain in order, build metadata ignored, numbers of any length — and a fast-check property against a
// reference model written from §11 (BigInt numbers, identifier lists): the comparison agrees with the
// model's sign, is antisymmetric, and transitive over triples.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compareVersions } from '../../../daemon/skills/semver';
import { SEMVER_PATTERN } from '../../../protocol/skills';

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

void test('semver.org §11 examples: each version is lower than the next', () => {
  const chain = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.9.0', '1.10.0', '1.11.0', '2.0.0', '2.1.0', '2.1.1'];
  for (let i = 0; i < chain.length; i++) {
    for (let j = 0; j < chain.length; j++) assert.equal(sign(compareVersions(chain[i]!, chain[j]!)), sign(i - j), `${chain[i]} vs ${chain[j]}`);
  }
});

void test('build metadata is ignored; numbers past 2^53 compare exactly', () => {
  assert.equal(compareVersions('1.0.0+build.1', '1.0.0+build.2'), 0);
  assert.equal(compareVersions('1.0.0-rc.1+x', '1.0.0-rc.1'), 0);
  assert.ok(compareVersions('1.0.9007199254740993', '1.0.9007199254740992') > 0);
  assert.ok(compareVersions('10.0.0', '9.99.99') > 0);
  assert.ok(compareVersions('1.0.0-2', '1.0.0-10') < 0, 'numeric identifiers compare as numbers');
  assert.ok(compareVersions('1.0.0-10', '1.0.0-1a') < 0, 'numeric identifiers are lower than alphanumeric ones');
});

/** §11 as written: core numbers, then a release above its pre-releases, then identifiers one by one. */
function reference(a: string, b: string): number {
  const parse = (v: string) => {
    const [main] = v.split('+') as [string];
    const dash = main.indexOf('-');
    const core = (dash < 0 ? main : main.slice(0, dash)).split('.').map(BigInt);
    const pre = dash < 0 ? null : main.slice(dash + 1).split('.');
    return { core, pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) if (x.core[i] !== y.core[i]) return x.core[i]! < y.core[i]! ? -1 : 1;
  if (x.pre === null || y.pre === null) return x.pre === y.pre ? 0 : x.pre === null ? 1 : -1;
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i];
    const q = y.pre[i];
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    if (p === q) continue;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn) return BigInt(p) < BigInt(q) ? -1 : 1;
    if (pn !== qn) return pn ? -1 : 1;
    return p < q ? -1 : 1;
  }
  return 0;
}

const num = fc.oneof(fc.constantFrom('0', '1', '2', '10', '11'), fc.bigInt({ min: 0n, max: 10n ** 20n }).map(String));
const ident = fc.oneof(num, fc.constantFrom('alpha', 'beta', 'rc', 'a1', '1a', '-', 'x-y', 'B', 'b'));
const version = fc
  .record({ core: fc.tuple(num, num, num), pre: fc.option(fc.array(ident, { minLength: 1, maxLength: 4 })), build: fc.option(fc.constantFrom('build.1', '001', 'sha.abc')) })
  .map(({ core, pre, build }) => `${core.join('.')}${pre ? `-${pre.join('.')}` : ''}${build ? `+${build}` : ''}`);

void test('property: agrees with the §11 reference model, antisymmetric, transitive', () => {
  const pattern = new RegExp(SEMVER_PATTERN);
  fc.assert(
    fc.property(version, version, version, (a, b, c) => {
      for (const v of [a, b, c]) assert.match(v, pattern);
      assert.equal(sign(compareVersions(a, b)), reference(a, b), `${a} vs ${b}`);
      assert.equal(sign(compareVersions(a, b)), -sign(compareVersions(b, a)));
      if (compareVersions(a, b) <= 0 && compareVersions(b, c) <= 0) assert.ok(compareVersions(a, c) <= 0, `${a} <= ${b} <= ${c}`);
    }),
    { numRuns: 2000 },
  );
});
