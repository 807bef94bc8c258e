// The brain's typed event bus (STYLE.md 3, zigbee2mqtt's eventBus): parts react to events instead of
// calling each other. Listeners are keyed by owner, so a capability that goes away takes all of its
// listeners with it (`off(owner)`); a listener that throws is reported and never breaks the emitter
// or the listeners after it.
import type { Logger } from 'pino';

export type Listener<E> = (event: E) => void;

export class EventBus<E> {
  private readonly listeners = new Map<string, Listener<E>[]>();

  constructor(private readonly onError: (owner: string, err: unknown, event: E) => void) {}

  /** A bus whose failing listeners are logged at error with their owner. */
  static logged<E>(logger: Logger, what: string): EventBus<E> {
    return new EventBus<E>((owner, err) => logger.error({ err, owner }, `${what} listener failed`));
  }

  on(owner: string, listener: Listener<E>): void {
    const mine = this.listeners.get(owner);
    if (mine) mine.push(listener);
    else this.listeners.set(owner, [listener]);
  }

  /** Removes every listener of `owner`. */
  off(owner: string): void {
    this.listeners.delete(owner);
  }

  owners(): string[] {
    return [...this.listeners.keys()];
  }

  emit(event: E): void {
    for (const [owner, listeners] of this.listeners) {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (err) {
          this.onError(owner, err, event);
        }
      }
    }
  }
}
