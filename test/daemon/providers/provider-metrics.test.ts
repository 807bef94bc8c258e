// daemon/providers/provider-metrics.ts: the providers declare svc_llm_429_total (every configured
// provider at zero) and svc_llm_failover_chain_exhausted_total, and count exactly what they are told
// (fast-check against a model). The chain's own use of them is in failover-chain.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { providerMetrics } from '../../../daemon/providers/provider-metrics';
import { createMetrics } from '../../../daemon/metrics/metrics';
import { samples } from '../../helpers/metric-samples';

const IDS = ['oai', 'claude', 'local'];

void test('counts every rate limit per provider and every exhaustion, configured providers starting at zero (model check)', async () => {
  const event = fc.oneof(fc.constantFrom(...IDS, 'unconfigured').map((provider) => ({ provider })), fc.constant({ provider: null }));
  await fc.assert(
    fc.asyncProperty(fc.subarray(IDS), fc.array(event, { maxLength: 20 }), async (configured, events) => {
      const m = createMetrics(true);
      const metrics = providerMetrics(m.registry, configured);
      const model = new Map<string, number>(configured.map((id) => [id, 0]));
      let exhausted = 0;
      for (const e of events) {
        if (e.provider === null) {
          metrics.chainExhausted();
          exhausted++;
        } else {
          metrics.rateLimited(e.provider);
          model.set(e.provider, (model.get(e.provider) ?? 0) + 1);
        }
      }
      const all = samples(await m.render());
      const limited = all.filter((s) => s.name === 'svc_llm_429_total').map((s) => [s.labels.provider!, s.value] as const);
      assert.deepEqual(new Map(limited), model);
      assert.equal(all.find((s) => s.name === 'svc_llm_failover_chain_exhausted_total')?.value, exhausted);
    }),
  );
});

void test('declared by providers, once per registry; with metrics off nothing renders', async () => {
  const m = createMetrics(true);
  providerMetrics(m.registry, IDS);
  assert.equal(m.registry.owners().get('svc_llm_429_total'), 'providers');
  assert.equal(m.registry.owners().get('svc_llm_failover_chain_exhausted_total'), 'providers');
  assert.throws(() => providerMetrics(m.registry, IDS), /svc_llm_429_total is already declared by providers/);
  const off = createMetrics(false);
  const quiet = providerMetrics(off.registry, IDS);
  quiet.rateLimited('oai');
  quiet.chainExhausted();
  assert.equal(await off.render(), '');
});
