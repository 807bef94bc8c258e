// daemon/metrics/awaiting-capabilities.ts: the spec 4.12 metric nothing emits yet is declared once, at
// zero, with every fixed reason; the capability that will emit it must take it from here (declaring it
// beside this file is refused, so the move cannot be half done).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AWAITING_OWNER, declareAwaitingCapabilities, SANDBOX_KILL_REASONS } from '../../../daemon/metrics/awaiting-capabilities';
import { createMetrics } from '../../../daemon/metrics/metrics';
import { samples } from '../../helpers/metric-samples';

const AWAITING = ['svc_sandbox_kills_total'];

void test('declares the metrics awaiting their capability, with their types and every fixed reason at zero', async () => {
  const m = createMetrics(true);
  declareAwaitingCapabilities(m.registry);
  const owned = [...m.registry.owners()].filter(([, owner]) => owner === AWAITING_OWNER).map(([name]) => name);
  assert.deepEqual(owned.sort(), [...AWAITING].sort());
  const text = await m.render();
  const types = Object.fromEntries([...text.matchAll(/^# TYPE (svc_(?!http)\S+) (\S+)$/gm)].map((x) => [x[1]!, x[2]!]));
  assert.deepEqual(types, { svc_sandbox_kills_total: 'counter' });
  const series = samples(text).map((s) => `${s.name}${JSON.stringify(s.labels)} ${s.value}`);
  assert.deepEqual(series.sort(), SANDBOX_KILL_REASONS.map((reason) => `svc_sandbox_kills_total{"reason":"${reason}"} 0`).sort());
});

void test('a capability declaring one of them while it still waits here is refused, metrics on or off', () => {
  for (const enabled of [true, false]) {
    const m = createMetrics(enabled);
    declareAwaitingCapabilities(m.registry);
    assert.throws(() => m.registry.counter('skills', { name: 'svc_sandbox_kills_total', help: 'x' }), /already declared by awaiting-capabilities/);
    assert.throws(() => declareAwaitingCapabilities(m.registry), /already declared/);
  }
});
