// What `svc models list|test|pin` does (spec 4.14 "per-provider chat model list/test/pin"), behind
// /api/providers/{provider}/models. A test goes to one provider directly, never through the chain,
// and records no cooldown: it reports what happened, it does not steer traffic.
import { AppError } from '../kernel/errors';
import type { KeyInfo, ModelTestResponse, ModelsResponse, PinResponse, ProviderInfo } from '../../protocol/providers';
import { cooldownInfo, type KeyAdmin } from './key-admin';
import { ProviderError } from './provider';
import type { ChainMember } from './failover-chain';
import type { ProviderState } from './provider-state';
import type { ProviderRegistry } from './provider-registry';

export interface ModelAdminDeps {
  registry: ProviderRegistry;
  state: ProviderState;
  keys: KeyAdmin;
  now?: () => number;
}

export const TEST_PROMPT = 'Reply with the single word: ok';

export class ModelAdmin {
  private readonly now: () => number;

  constructor(private readonly deps: ModelAdminDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The chain as configured, with effective models, cooldowns and keys (GET /api/providers). */
  providers(): ProviderInfo[] {
    const members = this.deps.registry.members();
    return this.deps.registry.entries().map((e, position) => {
      const c = this.deps.state.cooldown({ provider: e.id, label: null });
      const active = c !== undefined && c.untilMs > this.now();
      const keys = this.deps.keys.list(e.id);
      return {
        id: e.id,
        kind: e.kind,
        position,
        base_url: e.base_url ?? null,
        model: this.deps.registry.model(e),
        pinned_model: this.deps.state.pinnedModel(e.id) ?? null,
        keyless: e.keyless === true || e.kind === 'local',
        state: active ? 'cooling' : memberState(members[position], keys),
        cooldown: c ? cooldownInfo(c, this.now()) : null,
        keys,
      };
    });
  }

  async list(provider: string): Promise<ModelsResponse> {
    const member = this.member(provider);
    const slot = this.firstSlot(member);
    let models: string[];
    try {
      models = await slot.provider.listModels();
    } catch (err) {
      throw asAppError(err, provider);
    }
    const e = this.deps.registry.entry(provider);
    return { provider, models, pinned: this.deps.state.pinnedModel(provider) ?? null, effective: this.deps.registry.model(e) };
  }

  async test(provider: string, model: string | undefined): Promise<ModelTestResponse> {
    const slot = this.firstSlot(this.member(provider));
    const used = model ?? this.deps.registry.model(this.deps.registry.entry(provider));
    const started = performance.now();
    let firstToken: number | null = null;
    let text = '';
    const base = { provider, key: slot.label, model: used };
    try {
      for await (const ev of slot.provider.chat({ messages: [{ role: 'user', content: TEST_PROMPT }], maxTokens: 8, ...(model ? { model } : {}) })) {
        firstToken ??= elapsed(started);
        if (ev.type === 'text_delta') text += ev.text;
        if (ev.type === 'done') base.model = ev.model;
      }
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      return { ...base, ok: false, latency_ms: elapsed(started), first_token_ms: firstToken, text, error_class: err.errorClass, message: err.message };
    }
    return { ...base, ok: true, latency_ms: elapsed(started), first_token_ms: firstToken, text: text.slice(0, 200), error_class: null, message: null };
  }

  async pin(provider: string, model: string | null): Promise<PinResponse> {
    const e = this.deps.registry.entry(provider);
    await this.deps.state.pin(provider, model, this.now());
    return { provider, pinned: this.deps.state.pinnedModel(provider) ?? null, effective: this.deps.registry.model(e) };
  }

  private member(provider: string): ChainMember {
    return this.deps.registry.member(this.deps.registry.entry(provider));
  }

  /** The first key that is not cooling down, else the first key: a test should still say why it fails. */
  private firstSlot(member: ChainMember): ChainMember['slots'][number] {
    const ready = member.slots.find((s) => s.label === null || !this.deps.state.coolingDown({ provider: member.id, label: s.label }, this.now()));
    const slot = ready ?? member.slots[0];
    if (!slot) throw new AppError('CONFLICT', `provider "${member.id}" cannot be used: ${member.unavailable?.message ?? 'no key'}`, { provider: member.id });
    return slot;
  }
}

/**
 * A member without keys, or whose every key is disabled (auth, billing: only `svc key recover` or
 * time brings it back), cannot answer: unavailable. Every key cooling, none disabled: cooling.
 */
function memberState(member: ChainMember | undefined, keys: readonly KeyInfo[]): ProviderInfo['state'] {
  if (!member || member.slots.length === 0) return 'unavailable';
  const keyed = member.slots.filter((s) => s.label !== null).map((s) => keys.find((k) => k.label === s.label)?.state ?? 'ok');
  if (keyed.length === 0 || keyed.length < member.slots.length || keyed.includes('ok')) return 'ok';
  return keyed.every((s) => s === 'disabled') ? 'unavailable' : 'cooling';
}

const elapsed = (started: number): number => Math.round((performance.now() - started) * 10) / 10;

/** A provider's refusal becomes a 502-class answer with its class, not a brain error. */
function asAppError(err: unknown, provider: string): unknown {
  if (!(err instanceof ProviderError)) return err;
  return new AppError('PROVIDER_FAILED', `${provider}: ${err.errorClass}: ${err.message}`, { provider, error_class: err.errorClass, status: err.opts.status ?? null }, 502);
}
