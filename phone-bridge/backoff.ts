// Reconnect delays (node-protocol.md "Handshake and liveness": exponential backoff, 100 ms doubling to
// 30 s, with jitter). The delay of attempt n is drawn from the upper half of min(30 s, 100 ms · 2^n)
// ("equal jitter"): bridges that lost the brain together do not come back in one burst, and no delay
// is ever shorter than half its step. A connection that stayed registered resets the count.
export const BACKOFF_INITIAL_MS = 100;
export const BACKOFF_MAX_MS = 30_000;

/** The delay before reconnect attempt `attempt` (0 for the first retry); `random` is in [0, 1). */
export function backoffDelay(attempt: number, random: () => number): number {
  const step = Math.min(BACKOFF_MAX_MS, BACKOFF_INITIAL_MS * 2 ** Math.min(Math.max(0, attempt), 30));
  return Math.round(step / 2 + random() * (step / 2));
}
