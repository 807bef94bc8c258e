// What the agent announces on the bus (STYLE.md 3): the dashboard timeline, and later channels and
// sync, react to these instead of being called by the turn loop.
import type { EventBus } from '../kernel/event-bus';
import type { SpecialistName } from '../../protocol/session';

export type AgentEvent =
  | { type: 'session_opened'; sessionId: string; at: number }
  | { type: 'session_closed'; sessionId: string; reason: string; episodeId: string | null; at: number }
  | { type: 'turn_finished'; sessionId: string; turnId: string; text: string; answer: string; specialist: SpecialistName; finishReason: string; at: number }
  | { type: 'tool_denied'; sessionId: string; turnId: string; tool: string; reason: string; at: number }
  /** Facts a turn stated, stored in the knowledge graph (ids; empty when none was found). */
  | { type: 'knowledge_extracted'; sessionId: string; turnId: string; via: 'rules' | 'model'; facts: string[]; at: number };

/** The agent's events on the kernel's bus. */
export type AgentEvents = EventBus<AgentEvent>;
