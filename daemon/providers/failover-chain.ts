// The failover chain (spec 1.1 "route to an LLM provider through a multi-provider interface"): itself
// a Provider. It walks the configured providers in order and, inside each, its labelled keys in label
// order, skipping whatever is cooling down. A failure is classified (error-classifier.ts), puts the
// key or the provider aside (cooldown-policy.ts, persisted by provider-state.ts) and moves on:
//   key-scoped classes (rate_limit, auth, billing)  → next key of the same provider, then next provider
//   provider-scoped (overloaded, timeout, network, unknown) → next provider
//   context_overflow → next provider (it may have a larger window), no cooldown
//   bad_request → thrown at once: the request itself is wrong and would fail everywhere
// Output is never duplicated: a provider that fails after it yielded its first event is not replaced;
// the error reaches the caller after the partial output (docs/providers.md "Failover and streaming").
// Each member is told what the walk passed over before it (ChatRequest.passed), so the embedded local
// agent can say why no model answered; answering() names the member that answers now for status.
import type { Logger } from 'pino';
import type { ProviderMetrics } from './provider-metrics';
import { ChainExhaustedError, ProviderError, type AnsweringProvider, type ChatEvent, type ChatRequest, type Provider, type ProviderErrorClass } from './provider';
import { KEY_SCOPED, NO_FAILOVER } from './error-classifier';
import { cooldownMs, DISABLING, type CooldownSettings } from './cooldown-policy';
import type { CooldownTarget, ProviderState } from './provider-state';

/** One usable key of a provider (label null: keyless server or the embedded local provider). */
export interface ChainSlot {
  label: string | null;
  provider: Provider;
}

export interface ChainMember {
  id: string;
  kind: Provider['kind'];
  slots: readonly ChainSlot[];
  /** Why the member has no slots (no key stored, local provider not built in), shown in attempts. */
  unavailable?: { errorClass: ProviderErrorClass; message: string };
}

export interface ChainDeps {
  /** The current members; asked once per call so key changes apply to the next turn. */
  members: () => readonly ChainMember[];
  state: ProviderState;
  cooldowns: CooldownSettings;
  metrics: ProviderMetrics;
  logger: Logger;
  now?: () => number;
}

type Attempt = ChainExhaustedError['attempts'][number];
type Outcome = { kind: 'done' } | { kind: 'next_key' | 'next_provider'; attempt: Attempt };

export class FailoverChain implements Provider {
  readonly id = 'chain';
  readonly kind = 'chain' as const;
  private readonly now: () => number;
  /** Id of the member that completed the last answer. */
  private lastAnswered: string | null = null;

  constructor(private readonly deps: ChainDeps) {
    this.now = deps.now ?? Date.now;
  }

  async *chat(request: ChatRequest): AsyncIterable<ChatEvent> {
    const attempts: Attempt[] = [];
    for (const member of this.deps.members()) {
      if (this.deps.state.coolingDown({ provider: member.id, label: null }, this.now())) {
        attempts.push({ provider: member.id, errorClass: 'cooldown', message: this.cooldownMessage({ provider: member.id, label: null }) });
        continue;
      }
      if (member.slots.length === 0) {
        attempts.push({ provider: member.id, ...(member.unavailable ?? { errorClass: 'unknown', message: 'no usable provider' }) });
        continue;
      }
      let tried = false;
      for (const slot of member.slots) {
        if (slot.label !== null && this.deps.state.coolingDown({ provider: member.id, label: slot.label }, this.now())) continue;
        tried = true;
        const outcome: Outcome = yield* this.attempt(member, slot, attempts.length > 0 ? { ...request, passed: [...attempts] } : request);
        if (outcome.kind === 'done') return;
        attempts.push(outcome.attempt);
        if (outcome.kind === 'next_provider') break;
      }
      if (!tried) attempts.push(this.keysAside(member));
    }
    this.deps.metrics.chainExhausted();
    throw new ChainExhaustedError(attempts);
  }

  /** One try of one key; yields its events; tells the walk what to do next or throws. */
  private async *attempt(member: ChainMember, slot: ChainSlot, request: ChatRequest): AsyncGenerator<ChatEvent, Outcome> {
    let started = false;
    try {
      for await (const event of slot.provider.chat(request)) {
        started = true;
        yield event;
      }
    } catch (err) {
      if (request.signal?.aborted) throw err;
      const failure = this.asProviderError(err, member.id, slot.label);
      this.recordFailure(member.id, slot.label, failure);
      // Something already reached the caller: a second provider would repeat or contradict it.
      if (started || NO_FAILOVER.has(failure.errorClass)) throw failure;
      const keyScoped = KEY_SCOPED.has(failure.errorClass) && slot.label !== null;
      return { kind: keyScoped ? 'next_key' : 'next_provider', attempt: { provider: member.id, errorClass: failure.errorClass, message: failure.message } };
    }
    this.lastAnswered = member.id;
    this.persist(
      this.deps.state.reset([
        { provider: member.id, label: null },
        ...(slot.label === null ? [] : [{ provider: member.id, label: slot.label }]),
      ]),
    );
    return { kind: 'done' };
  }

  private asProviderError(err: unknown, provider: string, label: string | null): ProviderError {
    if (err instanceof ProviderError) return err;
    // A provider that throws something else has a bug; it is logged loudly and treated as a failure
    // of that provider so the user still gets an answer from the next one.
    this.deps.logger.error({ err, provider }, 'provider threw a non-ProviderError');
    return new ProviderError('unknown', err instanceof Error ? err.message : String(err), provider, label === null ? {} : { keyLabel: label });
  }

  /**
   * Cooldowns change in memory at once; the durable write is not awaited, so a failover does not wait
   * for an fsync (measured: ~20 ms per commit here, more on an SD card). A cooldown lost to a crash
   * only costs one more failed request after the restart. A failed write is logged as an error.
   */
  private persist(write: Promise<unknown>): void {
    write.catch((err: unknown) => this.deps.logger.error({ err }, 'could not store provider cooldown state'));
  }

  private recordFailure(provider: string, label: string | null, failure: ProviderError): void {
    if (failure.errorClass === 'rate_limit' || failure.opts.status === 429) this.deps.metrics.rateLimited(provider);
    const target: CooldownTarget = { provider, label: KEY_SCOPED.has(failure.errorClass) ? label : null };
    const strikes = (this.deps.state.cooldown(target)?.strikes ?? 0) + 1;
    const ms = cooldownMs(failure.errorClass, strikes, failure.opts.retryAfterMs, this.deps.cooldowns);
    this.deps.logger.warn({ provider, key: label, error_class: failure.errorClass, status: failure.opts.status, cooldown_ms: ms }, `provider failed: ${failure.message}`);
    if (ms === 0) return;
    const now = this.now();
    this.persist(this.deps.state.put({ ...target, errorClass: failure.errorClass, untilMs: now + ms, strikes, message: failure.message }, now));
  }

  private cooldownMessage(t: CooldownTarget): string {
    const c = this.deps.state.cooldown(t);
    return c ? `cooling down after ${c.errorClass} for ${Math.ceil((c.untilMs - this.now()) / 1000)} s more` : 'cooling down';
  }

  /** Why none of a member's keys was tried: each key's state, and the command that re-enables one. */
  private keysAside(member: ChainMember): ChainExhaustedError['attempts'][number] {
    const cooldowns = member.slots.map((s) => ({ label: s.label, c: this.deps.state.cooldown({ provider: member.id, label: s.label }) }));
    const disabled = cooldowns.filter((k) => k.c !== undefined && DISABLING.has(k.c.errorClass));
    const parts = cooldowns.map(({ label, c }) => {
      if (!c) return `key ${label ?? '-'} cooling down`;
      const until = new Date(c.untilMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
      return DISABLING.has(c.errorClass) ? `key ${label ?? '-'} disabled after ${c.errorClass} until ${until}` : `key ${label ?? '-'} cooling down after ${c.errorClass} for ${Math.ceil((c.untilMs - this.now()) / 1000)} s more`;
    });
    const all = disabled.length === cooldowns.length;
    const hint = disabled.length > 0 ? `; once the key is fixed run \`svc key recover\`, or add another: \`svc key add ${member.id} <label>\`` : '';
    return { provider: member.id, errorClass: all ? disabled[0]!.c!.errorClass : 'cooldown', message: `${parts.join(', ')}${hint}` };
  }

  /** A member the next turn may use: not cooling down, with a key that is not cooling down either. */
  private usable(member: ChainMember, nowMs: number): boolean {
    if (member.kind === 'chain' || this.deps.state.coolingDown({ provider: member.id, label: null }, nowMs)) return false;
    return member.slots.some((s) => s.label === null || !this.deps.state.coolingDown({ provider: member.id, label: s.label }, nowMs));
  }

  /** The member that answered last while it is still usable, else the first usable one (status reports). */
  answering(): AnsweringProvider | null {
    const nowMs = this.now();
    const members = this.deps.members().filter((m) => this.usable(m, nowMs));
    const pick = members.find((m) => m.id === this.lastAnswered) ?? members[0];
    return pick && pick.kind !== 'chain' ? { id: pick.id, kind: pick.kind } : null;
  }

  /** Models of every member that answers, as "<provider>/<model>". */
  async listModels(signal?: AbortSignal): Promise<string[]> {
    const out: string[] = [];
    for (const member of this.deps.members()) {
      const slot = member.slots[0];
      if (!slot) continue;
      try {
        for (const m of await slot.provider.listModels(signal)) out.push(`${member.id}/${m}`);
      } catch (err) {
        if (!(err instanceof ProviderError)) throw err;
        this.deps.logger.info({ provider: member.id, error_class: err.errorClass }, 'model list unavailable');
      }
    }
    return out;
  }
}
