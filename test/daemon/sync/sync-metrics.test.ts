// daemon/sync/sync-metrics.ts: the three spec 4.12 series, every failure reason at zero from the start,
// and svc_sync_was_active_recent holding at 1 for 15 minutes after the last peer left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetrics } from '../../../daemon/metrics/metrics';
import { RECENT_MS, SyncMetrics } from '../../../daemon/sync/sync-metrics';
import { SYNC_FAILURE_REASONS } from '../../../protocol/sync-link';
import { sampleValue } from '../../helpers/metric-samples';

test('zero series for every reason; active peers and the recent flag follow what is observed', async () => {
  const m = createMetrics(true);
  const sync = new SyncMetrics(m.registry, 'sync');
  for (const reason of SYNC_FAILURE_REASONS) assert.equal(await sampleValue(m, 'svc_sync_failures_total', { reason }), 0, reason);
  assert.equal(await sampleValue(m, 'svc_sync_active_peers'), 0);
  assert.equal(await sampleValue(m, 'svc_sync_was_active_recent'), 0);

  sync.observe(2, 1_000);
  assert.equal(await sampleValue(m, 'svc_sync_active_peers'), 2);
  assert.equal(await sampleValue(m, 'svc_sync_was_active_recent'), 1);
  sync.observe(0, 5_000);
  assert.equal(await sampleValue(m, 'svc_sync_active_peers'), 0);
  sync.observe(0, 5_000 + RECENT_MS - 4_001);
  assert.equal(await sampleValue(m, 'svc_sync_was_active_recent'), 1, 'still within 15 minutes of the last peer');
  sync.observe(0, 1_000 + RECENT_MS);
  assert.equal(await sampleValue(m, 'svc_sync_was_active_recent'), 0);

  sync.failure('auth');
  sync.failure('auth');
  sync.failure('clock_skew');
  assert.equal(await sampleValue(m, 'svc_sync_failures_total', { reason: 'auth' }), 2);
  assert.deepEqual(sync.failures(), { auth: 2, clock_skew: 1 });
});
