// What changed in memory, for the parts that derive from it (vector index, wiki, term statistics).
// The type lives in the kernel's event vocabulary (kernel/events.ts).
import type { EventBus } from '../kernel/event-bus';
import type { MemoryChange } from '../kernel/events';

export type { MemoryChange };
export type MemoryEvents = EventBus<MemoryChange>;
