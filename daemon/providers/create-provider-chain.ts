// The one factory daemon/main.ts calls: settings + vault + store → the failover chain (a Provider for
// the turn loop) and the admin services behind /api/providers. It declares the providers' metrics
// (provider-metrics.ts), each configured provider at zero before the first rate limit (spec 4.12).
import type { Logger } from 'pino';
import type { MetricsRegistry } from '../kernel/metrics';
import type { Store } from '../store/store';
import { FailoverChain } from './failover-chain';
import { KeyAdmin } from './key-admin';
import { KeyRing, type SecretStore } from './key-ring';
import { ModelAdmin } from './model-admin';
import type { Provider } from './provider';
import { ProviderRegistry, type ProvidersSettings } from './provider-registry';
import { ProviderState } from './provider-state';
import { providerMetrics } from './provider-metrics';

export interface ProviderChainDeps {
  settings: ProvidersSettings;
  vault: SecretStore;
  store: Store;
  /** Where the chain declares svc_llm_429_total and svc_llm_failover_chain_exhausted_total. */
  metrics: MetricsRegistry;
  logger: Logger;
  /** The embedded local provider (D2's daemon/providers/local) for chain entries of kind 'local'. */
  local?: Provider | undefined;
  /** Re-reads vault.json for `svc key recover` (Vault.open()). */
  reloadVault?: () => 'ok' | 'locked';
  /** Removes vault secrets from stored cooldown messages (the secret scrubber). */
  scrub?: ((text: string) => string) | undefined;
  now?: () => number;
}

export interface ProviderChain {
  /** What the turn loop calls: streams from the first provider that answers. */
  chain: Provider;
  registry: ProviderRegistry;
  keys: KeyAdmin;
  models: ModelAdmin;
  state: ProviderState;
}

export function createProviderChain(deps: ProviderChainDeps): ProviderChain {
  const now = deps.now ?? Date.now;
  const state = new ProviderState(deps.store, deps.scrub).load();
  const ring = new KeyRing(deps.vault);
  const settings = { ...deps.settings, chain: uniqueEntries(deps.settings.chain, deps.logger) };
  const registry = new ProviderRegistry({ settings, keys: ring, state, local: deps.local, now });
  const chain = new FailoverChain({
    members: () => registry.members(),
    state,
    cooldowns: settings.cooldown,
    metrics: providerMetrics(deps.metrics, settings.chain.map((e) => e.id)),
    logger: deps.logger.child({ part: 'providers' }),
    now,
  });
  const keys = new KeyAdmin({ registry, keys: ring, vault: deps.vault, state, now, ...(deps.reloadVault ? { reloadVault: deps.reloadVault } : {}) });
  const models = new ModelAdmin({ registry, state, keys, now });
  return { chain, registry, keys, models, state };
}

/** An id is a vault prefix and a metrics label: a second entry with the same id is ignored, loudly. */
function uniqueEntries(chain: ProvidersSettings['chain'], logger: Logger): ProvidersSettings['chain'] {
  const seen = new Set<string>();
  return chain.filter((e) => {
    if (!seen.has(e.id)) {
      seen.add(e.id);
      return true;
    }
    logger.warn({ provider: e.id }, 'providers.chain lists this id twice; the later entry is ignored');
    return false;
  });
}
