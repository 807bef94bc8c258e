// The failover chain's two metrics (spec 4.12), declared by the providers that emit them. Every
// configured provider has its svc_llm_429_total series at zero from the start, so an alert or panel
// reads a zero rather than a missing series before the first rate limit.
import type { MetricsRegistry } from '../kernel/metrics';

export interface ProviderMetrics {
  /** A provider answered with a rate limit (HTTP 429, or classified as rate_limit). */
  rateLimited(provider: string): void;
  /** Every member of the chain failed one request. */
  chainExhausted(): void;
}

/** Declares the metrics under the owner `providers`; `providers` are the configured chain's ids. */
export function providerMetrics(registry: MetricsRegistry, providers: readonly string[]): ProviderMetrics {
  const limited = registry.counter<'provider'>('providers', {
    name: 'svc_llm_429_total',
    help: 'Rate-limit (429) answers from LLM providers',
    labels: ['provider'],
    zero: providers.map((provider) => ({ provider })),
  });
  const exhausted = registry.counter('providers', { name: 'svc_llm_failover_chain_exhausted_total', help: 'Turns for which every provider in the failover chain failed' });
  return {
    rateLimited: (provider) => limited.inc({ provider }),
    chainExhausted: () => exhausted.inc(),
  };
}
