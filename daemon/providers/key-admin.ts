// What `svc key add|list|remove|reset-cooldowns|recover` does, behind /api/providers (docs/providers.md).
//   add     probes the key (a model list; a 1-token chat where the server has no model list) and
//           stores it only when the provider accepts it
//   list    label, provider, fingerprint, cooldown state — never the secret
//   recover re-reads vault.json (a restored backup is picked up) and re-probes every key disabled
//           for auth or billing; the ones the provider accepts again are re-enabled
import { AppError } from '../kernel/errors';
import type { CooldownInfo, KeyInfo, RecoverResponse } from '../../protocol/providers';
import { DISABLING } from './cooldown-policy';
import { fingerprint, VAULT_NAMESPACE, type KeyRing, type SecretStore } from './key-ring';
import { ProviderError, type Provider } from './provider';
import type { Cooldown, ProviderState } from './provider-state';
import type { ProviderRegistry } from './provider-registry';

export interface KeyAdminDeps {
  registry: ProviderRegistry;
  keys: KeyRing;
  vault: SecretStore;
  state: ProviderState;
  /** Re-reads the vault file (Vault.open); 'locked' when it cannot be decrypted. */
  reloadVault?: () => 'ok' | 'locked';
  now?: () => number;
}

export interface ProbeOutcome {
  ok: boolean;
  latency_ms: number;
  models: number;
  failure?: ProviderError;
}

export class KeyAdmin {
  private readonly now: () => number;

  constructor(private readonly deps: KeyAdminDeps) {
    this.now = deps.now ?? Date.now;
  }

  list(provider?: string): KeyInfo[] {
    const configured = new Set(this.deps.registry.entries().map((e) => e.id));
    return this.deps.vault
      .keys(VAULT_NAMESPACE)
      .map((k) => splitVaultKey(k))
      .filter((k): k is { provider: string; label: string } => k !== null && (provider === undefined || k.provider === provider))
      .map((k) => this.info(k.provider, k.label, configured.has(k.provider)));
  }

  info(provider: string, label: string, configured = true): KeyInfo {
    const secret = this.deps.vault.get(VAULT_NAMESPACE, `${provider}:${label}`) ?? '';
    const c = this.deps.state.cooldown({ provider, label });
    const active = c !== undefined && c.untilMs > this.now();
    return { provider, label, fingerprint: fingerprint(secret), state: !active ? 'ok' : DISABLING.has(c.errorClass) ? 'disabled' : 'cooling', cooldown: c ? cooldownInfo(c, this.now()) : null, configured };
  }

  async add(provider: string, label: string, secret: string, opts: { replace?: boolean | undefined; probe?: boolean | undefined }): Promise<{ key: KeyInfo; probe: ProbeOutcome }> {
    const entry = this.deps.registry.entry(provider);
    if (entry.kind === 'local' || entry.keyless) throw new AppError('BAD_REQUEST', `provider "${provider}" uses no API key (kind ${entry.kind}${entry.keyless ? ', keyless' : ''})`);
    if (!opts.replace && this.deps.keys.has(provider, label)) throw new AppError('CONFLICT', `provider "${provider}" already has a key labelled "${label}" (use --replace)`, { provider, label });
    const probe = opts.probe === false ? { ok: true, latency_ms: 0, models: -1 } : await this.probe(provider, label, secret);
    if (!probe.ok) {
      const f = probe.failure!;
      throw new AppError('KEY_PROBE_FAILED', `the key was not saved: ${provider} answered ${f.errorClass}: ${f.message}`, { provider, label, error_class: f.errorClass, status: f.opts.status ?? null }, 422);
    }
    this.deps.keys.add({ provider, label, secret });
    await this.deps.state.reset([{ provider, label }]);
    this.deps.registry.invalidate();
    return { key: this.info(provider, label), probe };
  }

  async remove(provider: string, label: string): Promise<void> {
    if (!this.deps.keys.remove(provider, label)) throw new AppError('NOT_FOUND', `no key labelled "${label}" for provider "${provider}"`, { provider, label });
    await this.deps.state.reset([{ provider, label }]);
    this.deps.registry.invalidate();
  }

  /** Clears cooldowns (and failure counts) of one provider's keys and the provider itself, or of all. */
  resetCooldowns(provider?: string): Promise<number> {
    return this.deps.state.clear((c) => provider === undefined || c.provider === provider);
  }

  async recover(provider?: string): Promise<RecoverResponse> {
    const vault = this.deps.reloadVault ? this.deps.reloadVault() : 'ok';
    this.deps.registry.invalidate();
    if (vault === 'locked') return { vault, keys_in_vault: 0, results: [] };
    const results: RecoverResponse['results'] = [];
    const disabled = this.deps.state.all().filter((c) => c.label !== null && DISABLING.has(c.errorClass) && (provider === undefined || c.provider === provider));
    for (const c of disabled) {
      const label = c.label!;
      const secret = this.deps.vault.get(VAULT_NAMESPACE, `${c.provider}:${label}`);
      if (secret === undefined || !this.deps.registry.entries().some((e) => e.id === c.provider)) {
        await this.deps.state.reset([c]); // the key or its provider is gone: nothing left to disable
        continue;
      }
      const probe = await this.probe(c.provider, label, secret);
      if (probe.ok) await this.deps.state.reset([c]);
      results.push({ provider: c.provider, label, result: probe.ok ? 'recovered' : 'still_failing', error_class: probe.failure?.errorClass ?? null, message: probe.failure?.message ?? null });
    }
    return { vault, keys_in_vault: this.deps.vault.keys(VAULT_NAMESPACE).length, results };
  }

  /** One cheap authenticated call with a candidate key. */
  async probe(provider: string, label: string, secret: string): Promise<ProbeOutcome> {
    const adapter = this.deps.registry.adapter(this.deps.registry.entry(provider), { label, secret })!;
    const started = performance.now();
    try {
      const models = await adapter.listModels();
      return { ok: true, latency_ms: ms(started), models: models.length };
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      // Some OpenAI-compatible servers have no model list: a 404 there says nothing about the key.
      if (err.opts.status !== 404) return { ok: false, latency_ms: ms(started), models: 0, failure: err };
      return this.probeByChat(adapter, started);
    }
  }

  private async probeByChat(adapter: Provider, started: number): Promise<ProbeOutcome> {
    try {
      for await (const _ of adapter.chat({ messages: [{ role: 'user', content: 'ping' }], maxTokens: 1 })) {
        // draining the stream is the probe
      }
      return { ok: true, latency_ms: ms(started), models: 0 };
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      return { ok: false, latency_ms: ms(started), models: 0, failure: err };
    }
  }
}

const ms = (started: number): number => Math.round((performance.now() - started) * 10) / 10;

function splitVaultKey(k: string): { provider: string; label: string } | null {
  const i = k.indexOf(':');
  return i > 0 ? { provider: k.slice(0, i), label: k.slice(i + 1) } : null;
}

export function cooldownInfo(c: Cooldown, nowMs: number): CooldownInfo {
  return { error_class: c.errorClass, until: new Date(c.untilMs).toISOString(), active: c.untilMs > nowMs, strikes: c.strikes, message: c.message };
}
