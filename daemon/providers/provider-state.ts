// Durable provider state in the brain's store (migrations component 'providers'): cooldowns, so a
// restart does not hammer a key that was just rate-limited or revoked, and pinned models
// (svc models pin). Reads come from an in-memory copy loaded once, so the hot path of a turn
// never touches SQLite; every change is written through and awaited (durable before it counts).
// Cooldown messages quote provider errors, which may echo a key: they pass the secret scrubber before
// they are kept or stored, and rows stored before that are cleaned on load (issue 8 §4).
import type { Migration, Store } from '../store/store';
import type { ProviderErrorClass } from './provider';

export const PROVIDER_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'provider cooldowns and pinned models',
    up: `CREATE TABLE provider_cooldowns (
           target TEXT PRIMARY KEY,
           provider TEXT NOT NULL,
           label TEXT,
           error_class TEXT NOT NULL,
           until_ms INTEGER NOT NULL,
           strikes INTEGER NOT NULL,
           message TEXT NOT NULL,
           updated_ms INTEGER NOT NULL
         );
         CREATE TABLE provider_model_pins (
           provider TEXT PRIMARY KEY,
           model TEXT NOT NULL,
           updated_ms INTEGER NOT NULL
         );`,
  },
];

/** What a cooldown applies to: one labelled key, or the whole provider (label null). */
export interface CooldownTarget {
  provider: string;
  label: string | null;
}

export interface Cooldown extends CooldownTarget {
  errorClass: ProviderErrorClass;
  untilMs: number;
  /** Consecutive failures of this target; the next cooldown doubles with each. */
  strikes: number;
  message: string;
}

interface CooldownRow {
  provider: string;
  label: string | null;
  error_class: string;
  until_ms: number;
  strikes: number;
  message: string;
}

export const targetKey = (t: CooldownTarget): string => (t.label === null ? `provider:${t.provider}` : `key:${t.provider}:${t.label}`);

export class ProviderState {
  private readonly cooldowns = new Map<string, Cooldown>();
  private readonly pins = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly scrub: (text: string) => string = (text) => text,
  ) {}

  /** Applies migrations and loads the tables into memory. Call once before use. */
  load(): this {
    this.store.migrate('providers', PROVIDER_MIGRATIONS);
    for (const r of this.store.all<CooldownRow>('SELECT provider, label, error_class, until_ms, strikes, message FROM provider_cooldowns')) {
      const message = this.scrub(r.message);
      const c: Cooldown = { provider: r.provider, label: r.label, errorClass: r.error_class as ProviderErrorClass, untilMs: Number(r.until_ms), strikes: Number(r.strikes), message };
      this.cooldowns.set(targetKey(c), c);
      if (message !== r.message) this.store.run('UPDATE provider_cooldowns SET message = ? WHERE target = ?', [message, targetKey(c)]);
    }
    for (const r of this.store.all<{ provider: string; model: string }>('SELECT provider, model FROM provider_model_pins')) this.pins.set(r.provider, r.model);
    return this;
  }

  /** The target's record, expired or not (strikes outlive the cooldown until a success). */
  cooldown(t: CooldownTarget): Cooldown | undefined {
    return this.cooldowns.get(targetKey(t));
  }

  /** True while the target must be skipped. */
  coolingDown(t: CooldownTarget, nowMs: number): boolean {
    const c = this.cooldowns.get(targetKey(t));
    return c !== undefined && c.untilMs > nowMs;
  }

  all(): Cooldown[] {
    return [...this.cooldowns.values()];
  }

  async put(cooldown: Cooldown, nowMs: number): Promise<void> {
    const c = { ...cooldown, message: this.scrub(cooldown.message).slice(0, 500) };
    this.cooldowns.set(targetKey(c), c);
    await this.store.write((db) =>
      db.run(
        `INSERT INTO provider_cooldowns (target, provider, label, error_class, until_ms, strikes, message, updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(target) DO UPDATE SET error_class = excluded.error_class, until_ms = excluded.until_ms, strikes = excluded.strikes, message = excluded.message, updated_ms = excluded.updated_ms`,
        [targetKey(c), c.provider, c.label, c.errorClass, c.untilMs, c.strikes, c.message, nowMs],
      ),
    );
  }

  /** Forgets the targets that match; resolves with how many there were. Costs nothing when none. */
  async clear(match: (c: Cooldown) => boolean): Promise<number> {
    const gone = [...this.cooldowns.entries()].filter(([, c]) => match(c)).map(([k]) => k);
    if (gone.length === 0) return 0;
    for (const k of gone) this.cooldowns.delete(k);
    await this.store.write((db) => {
      for (const k of gone) db.run('DELETE FROM provider_cooldowns WHERE target = ?', [k]);
    });
    return gone.length;
  }

  /** Forgets exactly these targets (after a success: strikes start again from zero). */
  async reset(targets: readonly CooldownTarget[]): Promise<void> {
    const present = targets.map(targetKey).filter((k) => this.cooldowns.has(k));
    if (present.length === 0) return;
    for (const k of present) this.cooldowns.delete(k);
    await this.store.write((db) => {
      for (const k of present) db.run('DELETE FROM provider_cooldowns WHERE target = ?', [k]);
    });
  }

  pinnedModel(provider: string): string | undefined {
    return this.pins.get(provider);
  }

  async pin(provider: string, model: string | null, nowMs: number): Promise<void> {
    if (model === null) this.pins.delete(provider);
    else this.pins.set(provider, model);
    await this.store.write((db) =>
      model === null
        ? db.run('DELETE FROM provider_model_pins WHERE provider = ?', [provider])
        : db.run('INSERT INTO provider_model_pins (provider, model, updated_ms) VALUES (?, ?, ?) ON CONFLICT(provider) DO UPDATE SET model = excluded.model, updated_ms = excluded.updated_ms', [provider, model, nowMs]),
    );
  }
}
