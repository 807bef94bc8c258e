// svc marketplace against a loopback stand-in for the registry: search sends its text and kind, review
// lists the queue or posts a decision (one of --approve and --reject, a reason only with --reject), and
// withdraw signs the item and version with the home's publisher key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { marketplaceReview, marketplaceSearch, marketplaceWithdraw } from '../../../cli/commands/marketplace';
import { publicKeyOf, verifyMessage } from '../../../signing/ed25519';
import { readPublisherKey } from '../../../signing/publisher-key';
import { fakeBrain, io } from '../../helpers/cli-rig';

const common = { registry: undefined, json: false };

void test('search sends its text and kind and lists what matches; a bad kind is exit 2', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [200, { items: [{ id: 'u', kind: 'skill', name: 'weather', display_name: 'Weather', description: 'Forecasts', version: '1.0.0', key_id: 'k' }] }]);
  const { io: cli, text } = io();
  assert.equal(await marketplaceSearch(cli, conn, { ...common, text: 'rain now', kind: 'skill' }), 0);
  assert.equal(seen[0]!.url, '/registry/v1/items?q=rain+now&kind=skill');
  assert.match(text.out, /^weather {2}1\.0\.0 {2}skill {2}Weather — Forecasts$/m);
  assert.equal(await marketplaceSearch(io().io, conn, { ...common, text: undefined, kind: 'app' }), 2);
});

void test('review: the queue without an id; with one, exactly one decision, and a reason only with --reject', async (t) => {
  const { conn, seen } = await fakeBrain(t, (s) => (s.method === 'GET' ? [200, { submissions: [] }] : [200, { name: 'x', version: '1.0.0', state: 'rejected', visibility: 'private', reason: 'no docs' }]));
  const base = { ...common, id: undefined, approve: false, reject: false, reason: undefined };
  const listed = io();
  assert.equal(await marketplaceReview(listed.io, conn, base), 0);
  assert.match(listed.text.out, /no submissions are waiting/);
  assert.equal(await marketplaceReview(io().io, conn, { ...base, id: 'x' }), 2);
  assert.equal(await marketplaceReview(io().io, conn, { ...base, id: 'x', approve: true, reject: true }), 2);
  assert.equal(await marketplaceReview(io().io, conn, { ...base, approve: true }), 2);
  assert.equal(await marketplaceReview(io().io, conn, { ...base, id: 'x', approve: true, reason: 'why' }), 2);
  const rejected = io();
  assert.equal(await marketplaceReview(rejected.io, conn, { ...base, id: 'x', reject: true, reason: 'no docs' }), 0);
  assert.deepEqual(seen.at(-1), { method: 'POST', url: '/registry/v1/review/x', body: { decision: 'reject', reason: 'no docs' } });
  assert.match(rejected.text.out, /x 1\.0\.0: rejected \(private\) — no docs/);
});

void test('withdraw signs svc-registry-withdraw-v1, the item UUID and the version with the publisher key', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'svc-marketplace-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const { conn, seen } = await fakeBrain(t, (s) => (s.method === 'GET' ? [200, { id: 'item-uuid', name: 'pump' }] : [200, { version: '1.0.0', state: 'withdrawn' }]));
  assert.equal(await marketplaceWithdraw(io().io, { ...conn, home }, { ...common, name: 'pump', version: '1.0.0' }), 0);
  const body = seen[1]!.body as { version: string; key_id: string; signature: string };
  const key = readPublisherKey(home)!;
  assert.equal(seen[1]!.url, '/registry/v1/items/item-uuid/withdraw');
  assert.equal(body.key_id, key.keyId);
  assert.ok(verifyMessage(publicKeyOf(key.publicKey)!, 'svc-registry-withdraw-v1\nitem-uuid\n1.0.0', body.signature));
});
