// The /sync contract: every refusal maps to one of the bounded failure reasons and to an application
// or standard close code, every reason is reachable, and the defaults fit the frame bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SYNC_FRAME_BYTES, SYNC_FAILURE_REASONS, SYNC_FRAMES, SYNC_LINK_DEFAULTS, SYNC_REFUSALS } from '../../protocol/sync-link';

void test('refusals use the bounded reason set, and each reason is reachable', () => {
  const reasons = new Set(Object.values(SYNC_REFUSALS).map((r) => r.reason));
  assert.deepEqual([...reasons].sort(), [...SYNC_FAILURE_REASONS].sort());
  for (const [code, r] of Object.entries(SYNC_REFUSALS)) {
    assert.ok(r.close === 1009 || r.close === 1011 || (r.close >= 4000 && r.close < 5000), code);
    assert.ok(r.http >= 400 && r.http < 600, code);
  }
  assert.equal(SYNC_REFUSALS.unknown_peer.http, 401);
  assert.equal(SYNC_REFUSALS.revoked_peer.http, 401);
});

void test('every frame schema names its own type, and a batch fits a frame with room to spare', () => {
  for (const [type, schema] of Object.entries(SYNC_FRAMES)) assert.equal(schema.properties.type.const, type);
  assert.ok(SYNC_LINK_DEFAULTS.batchBytes * 2 <= MAX_SYNC_FRAME_BYTES);
  assert.ok(SYNC_LINK_DEFAULTS.idleTimeoutMs > SYNC_LINK_DEFAULTS.keepaliveMs * 2);
});
