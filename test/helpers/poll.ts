// Polls until a probe answers (the brain learns of sockets, frames and processes asynchronously):
// bounded, so a condition that never holds fails the test with what it was waiting for.
import { setTimeout as sleep } from 'node:timers/promises';

export async function until<T>(what: () => string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  for (let waited = 0; waited < timeoutMs; waited += 100) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what()}`);
}
