// The registry service on a real store, beyond the routes' test: pending limits, a rejected number
// submitted again, a review named by an item with two waiting, the binding rejecting another key's
// submission, an older version still downloadable once superseded, and review times.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../daemon/kernel/errors';
import { daemonBody, publisherKey, skillBody, tempRegistry, TEST_LIMITS } from '../../helpers/registry-bundles';

const ALICE = publisherKey();
const BOB = publisherKey();
const code = (status: number) => (err: unknown) => err instanceof AppError && err.status === status;

void test('a key has at most max_pending_per_key submissions waiting, the registry at most max_pending', async (t) => {
  const { registry } = tempRegistry(t, { ...TEST_LIMITS, maxPendingPerKey: 2, maxPending: 3 });
  await registry.publish(skillBody(ALICE, 'a', '1.0.0'));
  await registry.publish(skillBody(ALICE, 'b', '1.0.0'));
  await assert.rejects(registry.publish(skillBody(ALICE, 'c', '1.0.0')), code(429));
  await registry.publish(skillBody(BOB, 'd', '1.0.0'));
  await assert.rejects(registry.publish(skillBody(BOB, 'e', '1.0.0')), code(429));
  await registry.review('a', 'approve', undefined, 'the reviewer');
  await registry.publish(skillBody(ALICE, 'c', '1.0.0'));
});

void test('a rejected version comes back under the same number; a name with two waiting is reviewed by submission id', async (t) => {
  let now = 1_800_000_000_000;
  const { registry } = tempRegistry(t, TEST_LIMITS, () => now);
  const first = await registry.publish(skillBody(ALICE, 'weather', '1.0.0'));
  now += 1000;
  const rejected = await registry.review('weather', 'reject', 'no description', 'the reviewer');
  assert.deepEqual([rejected.state, rejected.reason, rejected.reviewed_at], ['rejected', 'no description', new Date(now).toISOString()]);
  const again = await registry.publish(skillBody(ALICE, 'weather', '1.0.0'));
  assert.equal(again.id, first.id, 'the item keeps its UUID');
  assert.notEqual(again.submission_id, first.submission_id);
  await registry.publish(skillBody(ALICE, 'weather', '1.1.0'));
  await assert.rejects(registry.review('weather', 'approve', undefined, 'the reviewer'), (err: unknown) => err instanceof AppError && err.status === 409 && /2 submissions waiting/.test(err.message));
  await registry.review(again.submission_id, 'approve', undefined, 'the reviewer');
  assert.equal(registry.detail('weather').current?.version, '1.0.0');
});

void test('the first approval binds the name: another key\'s waiting submission is rejected with the reason', async (t) => {
  let tick = 1_800_000_000_000;
  const { registry } = tempRegistry(t, TEST_LIMITS, () => tick++);
  await registry.publish(daemonBody(ALICE, 'pump', '1.0.0'));
  const bobs = await registry.publish(daemonBody(BOB, 'pump', '1.0.1'));
  await registry.review(registry.submissions()[0]!.submission_id, 'approve', undefined, 'the reviewer'); // Alice's, the oldest
  const rejected = registry.submissions('rejected');
  assert.deepEqual(rejected.map((s) => [s.submission_id, s.key_id]), [[bobs.submission_id, BOB.keyId]]);
  assert.match(rejected[0]!.reason ?? '', new RegExp(`bound to publisher key ${ALICE.keyId}`));
  await assert.rejects(registry.publish(daemonBody(BOB, 'pump', '2.0.0')), code(403));
});

void test('a superseded version stays downloadable by its number; the listing shows the published one', async (t) => {
  const { registry } = tempRegistry(t);
  await registry.publish(daemonBody(ALICE, 'pump', '1.0.0'));
  await registry.review('pump', 'approve', undefined, 'the reviewer');
  await registry.publish(daemonBody(ALICE, 'pump', '1.1.0'));
  assert.equal(registry.download('pump', undefined).view.version, '1.0.0', 'the older stays published while the newer waits');
  await assert.rejects(async () => registry.download('pump', '1.1.0'), code(409));
  await registry.review('pump', 'approve', undefined, 'the reviewer');
  assert.deepEqual(registry.list({ limit: 10 }).map((i) => i.version), ['1.1.0']);
  const old = registry.download('pump', '1.0.0');
  assert.equal(old.view.state, 'superseded');
  assert.equal(old.view.visibility, 'public');
  assert.deepEqual(registry.detail('pump').versions.map((v) => [v.version, v.state]), [['1.1.0', 'published'], ['1.0.0', 'superseded']]);
});

void test('publishes of one new name at once land as one item; reviews at once decide once', async (t) => {
  const { registry } = tempRegistry(t);
  const [a, b] = await Promise.all([registry.publish(daemonBody(ALICE, 'pump', '1.0.0')), registry.publish(daemonBody(BOB, 'pump', '1.0.1'))]);
  assert.equal(a.id, b.id);
  const results = await Promise.allSettled([registry.review(a.submission_id, 'approve', undefined, 'r'), registry.review(b.submission_id, 'approve', undefined, 'r')]);
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected'], 'the second approval meets the binding the first made');
  assert.ok(results[1].status === 'rejected' && results[1].reason instanceof AppError && results[1].reason.status === 409);
  assert.equal(registry.detail('pump').current?.key_id, ALICE.keyId);
});
