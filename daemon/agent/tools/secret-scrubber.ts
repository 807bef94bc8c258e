// No vault secret leaves the brain (spec 1.11, 5.4; issue 8 §4): tool results, summaries and UI
// payloads, log lines (daemon/logger.ts), stored provider state and provider API answers pass through
// one scrubber that removes every encoding of every secret (secret-matcher.ts). The patterns are built
// once per change of the secret set: a source with a revision (vaultSecrets) is asked for its secrets
// only when the revision moves, so a key added with `svc key add` is covered without a restart.
import { SecretMatcher } from './secret-matcher';

export type SecretSource = (() => Iterable<string>) & {
  /** Changes whenever the secrets may have; without it the secrets are compared on every scrub. */
  revision?: () => number;
};

export const REDACTED = '[REDACTED]';

const noSecrets: SecretSource = () => [];

export class SecretScrubber {
  private matcher: SecretMatcher | null = null;
  private seen: number | string | null = null;

  constructor(private source: SecretSource = noSecrets) {}

  /** Replaces the source (the vault opens after the logger is made). */
  use(source: SecretSource): void {
    this.source = source;
    this.matcher = null;
    this.seen = null;
  }

  scrub(text: string): string {
    return redact(text, this.current());
  }

  /** Scrubs every string inside a JSON-like value (objects, arrays, keys too), returning a new value. */
  scrubValue<T>(value: T): T {
    const matcher = this.current();
    return matcher.empty ? value : scrubDeep(value, matcher);
  }

  private current(): SecretMatcher {
    const revision = this.source.revision;
    if (revision) {
      const r = revision();
      if (this.matcher === null || r !== this.seen) {
        this.matcher = new SecretMatcher(this.source());
        this.seen = r;
      }
      return this.matcher;
    }
    const secrets = [...this.source()];
    const key = secrets.join('\u0000');
    if (this.matcher === null || key !== this.seen) {
      this.matcher = new SecretMatcher(secrets);
      this.seen = key;
    }
    return this.matcher;
  }
}

/** One-off scrub with a fixed list (a candidate key that is not in the vault yet). */
export function scrubSecrets(text: string, secrets: Iterable<string>): string {
  return redact(text, new SecretMatcher(secrets));
}

function redact(text: string, matcher: SecretMatcher): string {
  const spans = matcher.find(text);
  if (spans.length === 0) return text;
  let out = '';
  let at = 0;
  for (const [a, b] of spans) {
    out += text.slice(at, a) + REDACTED;
    at = b;
  }
  return out + text.slice(at);
}

function scrubDeep<T>(value: T, matcher: SecretMatcher): T {
  if (typeof value === 'string') return redact(value, matcher) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => scrubDeep(v, matcher)) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[redact(k, matcher)] = scrubDeep(v, matcher);
  return out as T;
}

interface VaultView {
  namespaces(): string[];
  keys(ns: string): string[];
  get(ns: string, key: string): string | undefined;
  status(): { state: string };
  /** Moves on every open, set and delete (daemon/vault/vault.ts). */
  revision?(): number;
}

/**
 * Every value in the vault, plus extra values (the API token). The vault holds nothing but secrets,
 * so every namespace is covered, including ones a later feature adds.
 */
export function vaultSecrets(vault: VaultView, extra: readonly string[] = []): SecretSource {
  const source: SecretSource = function* () {
    yield* extra;
    if (vault.status().state !== 'ok') return;
    for (const ns of vault.namespaces()) {
      for (const key of vault.keys(ns)) {
        const value = vault.get(ns, key);
        if (value !== undefined) yield value;
      }
    }
  };
  if (vault.revision) source.revision = () => vault.revision!();
  return source;
}
