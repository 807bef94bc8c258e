// What the agent announces (the types live in the kernel's event vocabulary, kernel/events.ts): the
// dashboard timeline, and later channels and sync, react to these instead of being called by the turn loop.
import type { EventBus } from '../kernel/event-bus';
import type { AgentEvent } from '../kernel/events';

export type { AgentEvent };
export type AgentEvents = EventBus<AgentEvent>;
