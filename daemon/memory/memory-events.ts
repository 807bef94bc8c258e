// What changed in memory, for the parts that derive from it (vector index, wiki, term statistics).
import type { Tier } from '../../protocol/memory';
import type { EventBus } from '../kernel/event-bus';

export interface MemoryChange {
  /** `annotate`: only metadata changed (a fact's confidence), not the text: nothing to re-embed. */
  kind: 'upsert' | 'annotate' | 'delete';
  tier: Tier;
  id: string;
  /** The searchable text of the item after the change (absent on delete). */
  text?: string;
}

/** What changed in memory, on the kernel's bus. */
export type MemoryEvents = EventBus<MemoryChange>;
