// Tool results never contain vault secrets (spec 1.11, 5.4): every tool result, summary and UI
// payload passes through the scrubber before it reaches the model or a client. The secret list is
// read when a result is scrubbed, so a key added with `svc key add` is covered without a restart.
export type SecretSource = () => Iterable<string>;

export const REDACTED = '[REDACTED]';
/** Shorter values (a PIN, "true") would redact ordinary words; vault secrets are keys and tokens. */
const MIN_SECRET_LENGTH = 8;

export class SecretScrubber {
  private cacheKey = '';
  private pattern: RegExp | null = null;

  constructor(private readonly source: SecretSource) {}

  scrub(text: string): string {
    const pattern = this.compile();
    return pattern ? text.replace(pattern, REDACTED) : text;
  }

  /** Scrubs every string inside a JSON-like value (objects, arrays), returning a new value. */
  scrubValue<T>(value: T): T {
    if (typeof value === 'string') return this.scrub(value) as T;
    if (Array.isArray(value)) return value.map((v: unknown) => this.scrubValue(v)) as T;
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[this.scrub(k)] = this.scrubValue(v);
      return out as T;
    }
    return value;
  }

  private compile(): RegExp | null {
    const secrets = [...new Set([...this.source()].filter((s) => s.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
    const key = secrets.join('\u0000');
    if (key !== this.cacheKey || (this.pattern === null && secrets.length > 0)) {
      this.cacheKey = key;
      this.pattern = secrets.length === 0 ? null : new RegExp(secrets.map(escapeRegExp).join('|'), 'g');
    }
    return this.pattern;
  }
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Every value in the vault, plus extra values (the API token). The vault holds nothing but secrets,
 * so every namespace is covered, including ones a later feature adds.
 */
export const vaultSecrets =
  (vault: { namespaces(): string[]; keys(ns: string): string[]; get(ns: string, key: string): string | undefined; status(): { state: string } }, extra: readonly string[] = []): SecretSource =>
  function* () {
    yield* extra;
    if (vault.status().state !== 'ok') return;
    for (const ns of vault.namespaces()) {
      for (const key of vault.keys(ns)) {
        const value = vault.get(ns, key);
        if (value !== undefined) yield value;
      }
    }
  };
