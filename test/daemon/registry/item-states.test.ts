// The registry's version states: worked examples of each transition and refusal, semver precedence,
// and a property over random event sequences that the invariants of docs/registry.md "States" hold
// after every step (one published version at most, public versions all by the bound key, versions only
// go up, a refusal changes nothing, a version becomes public only by an approval).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { boundReason, compareSemver, EMPTY_ITEM, publishedOf, transition, visibilityOf, type ItemEvent, type ItemRecord, type Transition } from '../../../daemon/registry/item-states';

const run = (events: readonly ItemEvent[]): ItemRecord =>
  events.reduce((item, e) => {
    const t = transition(item, e);
    assert.ok(t.ok, `${JSON.stringify(e)} refused: ${t.ok ? '' : t.message}`);
    return t.item;
  }, EMPTY_ITEM);
const refusal = (t: Transition): string | undefined => (t.ok ? undefined : t.code);
const stateOf = (item: ItemRecord, version: string): string | undefined => item.versions.find((v) => v.version === version)?.state;

void test('a submission is private until approved; a newer approval supersedes the published one', () => {
  const submitted = run([{ type: 'submit', version: '1.0.0', keyId: 'A' }]);
  assert.equal(stateOf(submitted, '1.0.0'), 'submitted');
  assert.equal(visibilityOf('submitted'), 'private');
  assert.equal(submitted.ownerKeyId, null);
  const two = run([
    { type: 'submit', version: '1.0.0', keyId: 'A' },
    { type: 'approve', version: '1.0.0' },
    { type: 'submit', version: '1.1.0', keyId: 'A' },
  ]);
  assert.equal(publishedOf(two)?.version, '1.0.0', 'the older stays published while the newer waits');
  assert.equal(two.ownerKeyId, 'A');
  const after = transition(two, { type: 'approve', version: '1.1.0' });
  assert.ok(after.ok);
  assert.deepEqual(after.item.versions.map((v) => [v.version, v.state]), [['1.0.0', 'superseded'], ['1.1.0', 'published']]);
  assert.equal(visibilityOf('superseded'), 'public');
});

void test('the first approval binds the name: other keys are refused, and their waiting submissions rejected', () => {
  const item = run([
    { type: 'submit', version: '1.0.0', keyId: 'A' },
    { type: 'submit', version: '1.0.1', keyId: 'B' },
    { type: 'approve', version: '1.0.0' },
  ]);
  assert.equal(stateOf(item, '1.0.1'), 'rejected');
  assert.equal(item.versions.find((v) => v.version === '1.0.1')?.reason, boundReason('A'));
  assert.equal(refusal(transition(item, { type: 'submit', version: '2.0.0', keyId: 'B' })), 'FORBIDDEN');
  assert.equal(refusal(transition(item, { type: 'withdraw', version: '1.0.0', keyId: 'B' })), 'FORBIDDEN');
});

void test('refusals: old or reused numbers, reviewing twice, unknown versions; a rejected number may come back', () => {
  const item = run([
    { type: 'submit', version: '1.2.0', keyId: 'A' },
    { type: 'approve', version: '1.2.0' },
    { type: 'submit', version: '1.3.0', keyId: 'A' },
    { type: 'reject', version: '1.3.0', reason: 'no description' },
  ]);
  assert.equal(refusal(transition(item, { type: 'submit', version: '1.1.0', keyId: 'A' })), 'CONFLICT');
  assert.equal(refusal(transition(item, { type: 'submit', version: '1.2.0', keyId: 'A' })), 'CONFLICT');
  assert.equal(refusal(transition(item, { type: 'approve', version: '1.2.0' })), 'CONFLICT');
  assert.equal(refusal(transition(item, { type: 'approve', version: '1.3.0' })), 'CONFLICT');
  assert.equal(refusal(transition(item, { type: 'approve', version: '9.9.9' })), 'NOT_FOUND');
  const again = transition(item, { type: 'submit', version: '1.3.0', keyId: 'A' });
  assert.ok(again.ok);
  assert.equal(stateOf(again.item, '1.3.0'), 'submitted');
  const withdrawn = run([{ type: 'submit', version: '1.0.0', keyId: 'A' }, { type: 'approve', version: '1.0.0' }, { type: 'withdraw', version: '1.0.0', keyId: 'A' }]);
  assert.equal(publishedOf(withdrawn), undefined);
  assert.equal(refusal(transition(withdrawn, { type: 'withdraw', version: '1.0.0', keyId: 'A' })), 'CONFLICT');
});

void test('semver precedence (semver.org 11): numbers numerically, a pre-release before its release, build metadata ignored', () => {
  const ordered = ['0.9.0', '1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.2.0', '1.10.0', '10.0.0'];
  for (let i = 0; i < ordered.length; i++) {
    for (let j = 0; j < ordered.length; j++) assert.equal(Math.sign(compareSemver(ordered[i]!, ordered[j]!)), Math.sign(i - j), `${ordered[i]} vs ${ordered[j]}`);
  }
  assert.equal(compareSemver('1.0.0+build.1', '1.0.0+build.2'), 0);
});

const VERSIONS = ['1.0.0', '1.0.1', '1.1.0-rc.1', '1.1.0', '2.0.0'];
const KEYS = ['A', 'B', 'C'];
const event: fc.Arbitrary<ItemEvent> = fc.oneof(
  fc.record({ type: fc.constant('submit' as const), version: fc.constantFrom(...VERSIONS), keyId: fc.constantFrom(...KEYS) }),
  fc.record({ type: fc.constant('approve' as const), version: fc.constantFrom(...VERSIONS) }),
  fc.record({ type: fc.constant('reject' as const), version: fc.constantFrom(...VERSIONS), reason: fc.constant('no') }),
  fc.record({ type: fc.constant('withdraw' as const), version: fc.constantFrom(...VERSIONS), keyId: fc.constantFrom(...KEYS) }),
);

function checkInvariants(item: ItemRecord): void {
  const published = item.versions.filter((v) => v.state === 'published');
  assert.ok(published.length <= 1, 'at most one published version');
  const numbers = item.versions.map((v) => v.version);
  assert.equal(new Set(numbers).size, numbers.length, 'a version number once');
  const everPublic = item.versions.filter((v) => v.state === 'published' || v.state === 'superseded');
  if (everPublic.length > 0) assert.notEqual(item.ownerKeyId, null, 'a public version binds the name');
  for (const v of everPublic) assert.equal(v.keyId, item.ownerKeyId, 'public versions are all by the bound key');
  for (const v of item.versions.filter((x) => x.state === 'superseded')) assert.ok(published.length === 0 || compareSemver(v.version, published[0]!.version) < 0, 'superseded versions are older than the published one');
  for (const v of item.versions.filter((x) => x.state === 'rejected')) assert.notEqual(v.reason, null, 'a rejection has a reason');
}

void test('property: after any sequence of events the invariants hold, refusals change nothing, and only an approval makes a version public', () => {
  fc.assert(
    fc.property(fc.array(event, { maxLength: 40 }), (events) => {
      let item = EMPTY_ITEM;
      for (const e of events) {
        const t = transition(item, e);
        if (!t.ok) continue; // pure: `item` is what it was
        for (const before of item.versions) {
          const after = t.item.versions.find((v) => v.version === before.version);
          assert.ok(after, 'no version disappears');
          if (visibilityOf(before.state) === 'private' && visibilityOf(after.state) === 'public') assert.equal(e.type, 'approve');
        }
        for (const added of t.item.versions.filter((v) => !item.versions.some((b) => b.version === v.version))) assert.equal(added.state, 'submitted', 'a new version lands submitted');
        if (item.ownerKeyId !== null) assert.equal(t.item.ownerKeyId, item.ownerKeyId, 'a binding never changes');
        item = t.item;
        checkInvariants(item);
      }
    }),
    { numRuns: 500 },
  );
});
