// Real parts for provider tests: a SQLite store in a temp dir, an in-memory secret store with the
// Vault's contract, the real metrics registry, and a chain built by the production factory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { parseSettings } from '../../../daemon/config/load-settings';
import type { ProviderEntry } from '../../../daemon/config/settings-schema';
import { createProviderChain, type ProviderChain } from '../../../daemon/providers/create-provider-chain';
import type { SecretStore } from '../../../daemon/providers/key-ring';
import type { Provider } from '../../../daemon/providers/provider';
import type { ProvidersSettings } from '../../../daemon/providers/provider-registry';
import { createMetrics, type Metrics } from '../../../daemon/metrics/metrics';

export class MemorySecrets implements SecretStore {
  readonly data = new Map<string, Map<string, string>>();
  get(ns: string, key: string): string | undefined {
    return this.data.get(ns)?.get(key);
  }
  set(ns: string, key: string, value: string): void {
    if (!this.data.has(ns)) this.data.set(ns, new Map());
    this.data.get(ns)!.set(key, value);
  }
  delete(ns: string, key: string): boolean {
    return this.data.get(ns)?.delete(key) ?? false;
  }
  keys(ns: string): string[] {
    return [...(this.data.get(ns)?.keys() ?? [])].sort();
  }
}

export function tempStore(): { store: SqliteStore; dir: string; reopen: () => SqliteStore; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-providers-'));
  const file = join(dir, 'brain.db');
  const handle = {
    store: new SqliteStore(file),
    dir,
    reopen: () => {
      handle.store.close();
      handle.store = new SqliteStore(file);
      return handle.store;
    },
    cleanup: () => {
      handle.store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}

export function providerSettings(chain: ProviderEntry[], overrides: Partial<Omit<ProvidersSettings, 'chain'>> = {}): ProvidersSettings {
  const s = parseSettings({ providers: { chain, first_token_timeout_ms: 5000, idle_timeout_ms: 5000, ...overrides } });
  return s.providers;
}

export interface Harness extends ProviderChain {
  /** A registry of its own: the chain declares its metrics in it (read them with sampleValue). */
  metrics: Metrics;
  vault: MemorySecrets;
}

export function buildChain(opts: { settings: ProvidersSettings; store: SqliteStore; vault?: MemorySecrets; local?: Provider; now?: () => number }): Harness {
  const vault = opts.vault ?? new MemorySecrets();
  const metrics = createMetrics(true);
  const built = createProviderChain({
    settings: opts.settings,
    vault,
    store: opts.store,
    metrics: metrics.registry,
    logger: pino({ level: 'silent' }),
    ...(opts.local ? { local: opts.local } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
  return { ...built, metrics, vault };
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Runs the iterable to its end and returns the events and the error it ended with (or null). */
export async function drain<T>(it: AsyncIterable<T>): Promise<{ events: T[]; error: unknown }> {
  const events: T[] = [];
  try {
    for await (const x of it) events.push(x);
  } catch (error) {
    return { events, error };
  }
  return { events, error: null };
}
