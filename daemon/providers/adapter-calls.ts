// What the OpenAI and Anthropic adapters share: their configuration, tool schemas as plain JSON
// Schema, turning a failure into a ProviderError (a caller's own abort passes through untouched) and
// paging through a models listing under one first-token timeout.
import type { ToolSpec } from '../kernel/conversation';
import { StallGuard, type StallTimeouts } from './stall-guard';
import { toProviderError, type SdkErrorClasses } from './sdk-failure';

export interface AdapterConfig {
  /** Provider id from settings (metrics label, ChatEvent.provider). */
  id: string;
  baseURL?: string | undefined;
  /** null for a keyless server (a local Ollama): the SDK still wants a string, so a placeholder goes out. */
  apiKey: string | null;
  keyLabel: string | null;
  /** Effective model when the request names none (pin > settings > built-in default), asked per call. */
  model: () => string;
  timeouts: StallTimeouts;
  now?: () => number;
}

const plainSchemas = new WeakMap<ToolSpec, Record<string, unknown>>();

/** TypeBox schemas are JSON Schema; the JSON round trip drops TypeBox's symbol keys. Cached per spec. */
export function plainSchema(t: ToolSpec): Record<string, unknown> {
  let s = plainSchemas.get(t);
  if (!s) {
    s = JSON.parse(JSON.stringify(t.parameters)) as Record<string, unknown>;
    plainSchemas.set(t, s);
  }
  return s;
}

export function adapterFailure(config: AdapterConfig, err: unknown, guard: StallGuard, sdk: SdkErrorClasses | undefined): Error {
  if (guard.cause === 'caller') return err instanceof Error ? err : new Error('request aborted by the caller');
  return toProviderError(err, { provider: config.id, keyLabel: config.keyLabel, secret: config.apiKey, aborted: guard.cause, nowMs: (config.now ?? Date.now)(), sdk });
}

/** Model ids from an SDK's auto-paginating list, sorted, at most 1000. */
export async function listModelIds(config: AdapterConfig, signal: AbortSignal | undefined, sdk: SdkErrorClasses, list: (signal: AbortSignal) => AsyncIterable<{ id: string }>): Promise<string[]> {
  const guard = new StallGuard({ firstTokenMs: config.timeouts.firstTokenMs, idleMs: config.timeouts.firstTokenMs }, signal);
  try {
    const ids: string[] = [];
    for await (const m of list(guard.signal)) {
      guard.tick();
      ids.push(m.id);
      if (ids.length >= 1000) break;
    }
    return ids.sort();
  } catch (err) {
    throw adapterFailure(config, err, guard, sdk);
  } finally {
    guard.done();
  }
}
