// Semantic Versioning 2.0.0 precedence (semver.org §11), for "is this install an upgrade": major, minor
// and patch compared as numbers; a pre-release is lower than its release; pre-release identifiers
// compare one by one, numeric ones as numbers and lower than alphanumeric ones, and a shorter list is
// lower when all before are equal. Build metadata is ignored. Versions are checked against
// protocol/skills.ts SEMVER_PATTERN before they get here.

/** Negative when a < b, 0 when they have the same precedence, positive when a > b. */
export function compareVersions(a: string, b: string): number {
  const [coreA, preA] = split(a);
  const [coreB, preB] = split(b);
  for (let i = 0; i < 3; i++) {
    const d = compareNumeric(coreA[i]!, coreB[i]!);
    if (d !== 0) return d;
  }
  if (preA.length === 0 || preB.length === 0) return preB.length - preA.length;
  for (let i = 0; i < Math.min(preA.length, preB.length); i++) {
    const d = compareIdentifier(preA[i]!, preB[i]!);
    if (d !== 0) return d;
  }
  return preA.length - preB.length;
}

function split(version: string): [string[], string[]] {
  const withoutBuild = version.split('+', 1)[0]!;
  const dash = withoutBuild.indexOf('-');
  const core = (dash === -1 ? withoutBuild : withoutBuild.slice(0, dash)).split('.');
  const pre = dash === -1 ? [] : withoutBuild.slice(dash + 1).split('.');
  return [core, pre];
}

const NUMERIC = /^\d+$/;

/** Digit strings without leading zeros compare by length, then lexically: no precision limit. */
const compareNumeric = (a: string, b: string): number => (a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0);

function compareIdentifier(a: string, b: string): number {
  const na = NUMERIC.test(a);
  const nb = NUMERIC.test(b);
  if (na && nb) return compareNumeric(a, b);
  if (na !== nb) return na ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
