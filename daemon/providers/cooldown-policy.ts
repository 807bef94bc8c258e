// How long a key or a provider is put aside after a failure: pure arithmetic over the settings'
// cooldown section (docs/providers.md "Cooldowns"). Each consecutive failure of the same target
// doubles the base time up to max_ms; success resets the count. Retry-After is honoured as given
// (capped at a day so a broken header cannot park a key for ever); auth and billing use their own
// long durations because waiting a minute will not fix a revoked key or an empty balance.
import type { Settings } from '../config/settings-schema';
import type { ProviderErrorClass } from './provider';

export type CooldownSettings = Settings['providers']['cooldown'];

export const RETRY_AFTER_CAP_MS = 86_400_000;
/** A Retry-After of 0 still keeps the key out of the current turn's retries; 1 s is the floor. */
export const RETRY_AFTER_FLOOR_MS = 1000;

export function cooldownMs(errorClass: ProviderErrorClass, strikes: number, retryAfterMs: number | undefined, policy: CooldownSettings): number {
  switch (errorClass) {
    case 'bad_request':
    case 'context_overflow':
      return 0;
    case 'auth':
      return policy.auth_ms;
    case 'billing':
      return policy.billing_ms;
    case 'rate_limit':
      if (retryAfterMs !== undefined) return clamp(retryAfterMs, RETRY_AFTER_FLOOR_MS, RETRY_AFTER_CAP_MS);
      return backoff(policy.rate_limit_ms, strikes, policy.max_ms);
    case 'overloaded':
      if (retryAfterMs !== undefined) return clamp(retryAfterMs, RETRY_AFTER_FLOOR_MS, RETRY_AFTER_CAP_MS);
      return backoff(policy.overloaded_ms, strikes, policy.max_ms);
    case 'timeout':
      return backoff(policy.timeout_ms, strikes, policy.max_ms);
    case 'network':
      return backoff(policy.network_ms, strikes, policy.max_ms);
    case 'unknown':
      return backoff(policy.unknown_ms, strikes, policy.max_ms);
  }
}

/** base · 2^(strikes-1), never above max (and never below base when base > max is configured). */
export function backoff(baseMs: number, strikes: number, maxMs: number): number {
  const exponent = Math.min(Math.max(strikes, 1) - 1, 30);
  return Math.min(baseMs * 2 ** exponent, Math.max(maxMs, baseMs));
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(Math.max(v, lo), hi);

/** Keys put aside for these classes are "disabled": only time or `svc key recover` brings them back. */
export const DISABLING: ReadonlySet<ProviderErrorClass> = new Set(['auth', 'billing']);
