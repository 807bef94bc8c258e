// Turns the settings' chain entries and the vault's keys into chain members: one adapter per
// (provider, key). Members are cached until a key changes (invalidate()), so a turn does not read the
// vault; models are resolved per call, so `svc models pin` applies to the next turn.
import type { Settings, ProviderEntry } from '../config/settings-schema';
import { AppError } from '../kernel/errors';
import { AnthropicProvider, ANTHROPIC_DEFAULT_MODEL } from './anthropic-provider';
import type { ChainMember, ChainSlot } from './failover-chain';
import type { KeyRing } from './key-ring';
import { OpenAiProvider, OPENAI_DEFAULT_MODEL } from './openai-provider';
import type { AdapterConfig } from './adapter-calls';
import type { Provider } from './provider';
import { LOCAL_MODEL } from './local/local-provider';
import type { ProviderState } from './provider-state';

export type ProvidersSettings = Settings['providers'];

export interface RegistryDeps {
  settings: ProvidersSettings;
  keys: KeyRing;
  state: ProviderState;
  /** The embedded local provider (daemon/providers/local), used for entries of kind 'local'. */
  local?: Provider | undefined;
  now?: () => number;
}

export class ProviderRegistry {
  private cached: ChainMember[] | null = null;

  constructor(private readonly deps: RegistryDeps) {}

  entries(): readonly ProviderEntry[] {
    return this.deps.settings.chain;
  }

  entry(id: string): ProviderEntry {
    const e = this.deps.settings.chain.find((x) => x.id === id);
    if (!e) throw new AppError('NOT_FOUND', `provider "${id}" is not in providers.chain of settings.json`, { provider: id });
    return e;
  }

  /** The model a call uses when the request names none: pin > settings > built-in default. */
  model(e: ProviderEntry): string {
    return this.deps.state.pinnedModel(e.id) ?? e.model ?? (e.kind === 'anthropic' ? ANTHROPIC_DEFAULT_MODEL : e.kind === 'openai' ? OPENAI_DEFAULT_MODEL : LOCAL_MODEL);
  }

  members(): readonly ChainMember[] {
    this.cached ??= this.deps.settings.chain.map((e) => this.member(e));
    return this.cached;
  }

  /** Call after keys change: the next turn rebuilds its adapters. */
  invalidate(): void {
    this.cached = null;
  }

  /** A provider instance for one key (or none, for keyless and local entries). */
  adapter(e: ProviderEntry, key: { label: string; secret: string } | null): Provider | undefined {
    if (e.kind === 'local') return this.deps.local;
    const config: AdapterConfig = {
      id: e.id,
      baseURL: e.base_url,
      apiKey: key?.secret ?? null,
      keyLabel: key?.label ?? null,
      model: () => this.model(e),
      timeouts: { firstTokenMs: e.timeout_ms ?? this.deps.settings.first_token_timeout_ms, idleMs: this.deps.settings.idle_timeout_ms },
      ...(this.deps.now ? { now: this.deps.now } : {}),
    };
    return e.kind === 'anthropic' ? new AnthropicProvider(config) : new OpenAiProvider(config);
  }

  /** The slots of one entry; used by the chain and by `svc models test`. */
  member(e: ProviderEntry): ChainMember {
    const base = { id: e.id, kind: e.kind };
    if (e.kind === 'local' || e.keyless) {
      const provider = this.adapter(e, null);
      return provider
        ? { ...base, slots: [{ label: null, provider }] }
        : { ...base, slots: [], unavailable: { errorClass: 'unknown', message: 'the embedded local provider is not available in this build' } };
    }
    let keys;
    try {
      keys = this.deps.keys.keys(e.id);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'VAULT_LOCKED') throw err;
      return { ...base, slots: [], unavailable: { errorClass: 'auth', message: err.message } };
    }
    const slots: ChainSlot[] = keys.map((k) => ({ label: k.label, provider: this.adapter(e, k)! }));
    return slots.length > 0 ? { ...base, slots } : { ...base, slots, unavailable: { errorClass: 'auth', message: `no API key stored: svc key add ${e.id} <label>` } };
  }
}
