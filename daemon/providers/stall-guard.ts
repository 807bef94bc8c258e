// Bounds one streamed request in time: a provider that has sent nothing within the first-token
// timeout, or that goes quiet for the idle timeout between chunks, is aborted (its fetch is
// cancelled through the AbortSignal handed to the SDK), so a stalled server can never hang a turn.
// One timer per request, re-armed with refresh() per chunk: no allocation on the hot path.
import type { AbortCause } from './sdk-failure';

export interface StallTimeouts {
  firstTokenMs: number;
  idleMs: number;
}

export class StallGuard {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout;
  private seenChunk = false;
  cause: AbortCause = null;

  constructor(
    private readonly timeouts: StallTimeouts,
    private readonly outer: AbortSignal | undefined,
  ) {
    this.timer = setTimeout(() => this.abort('first_token'), timeouts.firstTokenMs);
    if (outer?.aborted) this.abort('caller');
    else outer?.addEventListener('abort', this.onOuterAbort, { once: true });
  }

  /** The signal to give the SDK. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Call on every chunk that arrives. */
  tick(): void {
    if (this.seenChunk) {
      this.timer.refresh();
      return;
    }
    this.seenChunk = true;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.abort('idle'), this.timeouts.idleMs);
  }

  /** Always call when the request ends, however it ends. */
  done(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener('abort', this.onOuterAbort);
  }

  private readonly onOuterAbort = (): void => this.abort('caller');

  private abort(cause: Exclude<AbortCause, null>): void {
    if (this.cause !== null) return;
    this.cause = cause;
    clearTimeout(this.timer);
    this.controller.abort(new Error(`aborted: ${cause}`));
  }
}
