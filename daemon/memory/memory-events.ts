// What changed in memory, for the parts that derive from it (vector index, wiki). Listeners are keyed
// by owner and a failing listener is logged, never fatal (STYLE.md 3).
import type { Tier } from '../../protocol/memory';

export interface MemoryChange {
  /** `annotate`: only metadata changed (a fact's confidence), not the text: nothing to re-embed. */
  kind: 'upsert' | 'annotate' | 'delete';
  tier: Tier;
  id: string;
  /** The searchable text of the item after the change (absent on delete). */
  text?: string;
}

type Listener = (change: MemoryChange) => void;

export class MemoryEvents {
  private readonly listeners = new Map<string, Listener>();

  constructor(private readonly onError: (owner: string, err: unknown) => void = () => undefined) {}

  on(owner: string, listener: Listener): void {
    this.listeners.set(owner, listener);
  }

  emit(change: MemoryChange): void {
    for (const [owner, listener] of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.onError(owner, err);
      }
    }
  }
}
