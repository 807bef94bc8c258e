// When to dial a peer again (docs/sync.md "The link"): exponential backoff from 1 s doubling to 5
// minutes, each delay drawn from the upper half of its step ("equal jitter", as phone-bridge/backoff.ts
// does for nodes), so brains that lost each other together do not come back in one burst and no delay
// is shorter than half its step. A link that stayed up for a minute counts as stable and starts the
// count again; one that keeps dropping right after the handshake keeps backing off.
export const RECONNECT_INITIAL_MS = 1000;
export const RECONNECT_MAX_MS = 5 * 60_000;
export const STABLE_LINK_MS = 60_000;

/** The delay before reconnect attempt `attempt` (0 for the first retry); `random` is in [0, 1). */
export function reconnectDelay(attempt: number, random: () => number): number {
  const step = Math.min(RECONNECT_MAX_MS, RECONNECT_INITIAL_MS * 2 ** Math.min(Math.max(0, Math.floor(attempt)), 30));
  return Math.round(step / 2 + random() * (step / 2));
}

/** The reconnect state of one peer. Times are the host's clock in ms. */
export class ReconnectPolicy {
  private attempt = 0;
  private upSince: number | null = null;

  constructor(private readonly random: () => number) {}

  /** The link is established (the handshake ended). */
  linkUp(now: number): void {
    this.upSince = now;
  }

  /** The link ended or a dial failed: how long to wait before the next dial. */
  linkDown(now: number): number {
    if (this.upSince !== null && now - this.upSince >= STABLE_LINK_MS) this.attempt = 0;
    this.upSince = null;
    return reconnectDelay(this.attempt++, this.random);
  }

  /** How many retries in a row since the last stable link. */
  get attempts(): number {
    return this.attempt;
  }
}
