// What the OpenAI and Anthropic adapters do alike around an SDK call: turn a failure into a
// ProviderError (a caller's own abort passes through untouched) and page through a models listing
// under one first-token timeout.
import type { AdapterConfig } from './openai-provider';
import { StallGuard } from './stall-guard';
import { toProviderError, type SdkErrorClasses } from './sdk-failure';

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
