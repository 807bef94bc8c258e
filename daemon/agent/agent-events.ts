// The agent's typed event bus (STYLE.md 3): the dashboard timeline, and later channels and sync,
// react to these instead of being called by the turn loop. Listeners are keyed by owner; a failing
// listener is logged and never breaks a turn.
import type { Logger } from 'pino';
import type { SpecialistName } from '../../protocol/session';

export type AgentEvent =
  | { type: 'session_opened'; sessionId: string; at: number }
  | { type: 'session_closed'; sessionId: string; reason: string; episodeId: string | null; at: number }
  | { type: 'turn_finished'; sessionId: string; turnId: string; text: string; answer: string; specialist: SpecialistName; finishReason: string; at: number }
  | { type: 'tool_denied'; sessionId: string; turnId: string; tool: string; reason: string; at: number }
  /** Facts a turn stated, stored in the knowledge graph (ids; empty when none was found). */
  | { type: 'knowledge_extracted'; sessionId: string; turnId: string; via: 'rules' | 'model'; facts: string[]; at: number };

export type AgentListener = (event: AgentEvent) => void;

export class AgentEvents {
  private readonly listeners = new Map<string, AgentListener>();

  constructor(private readonly logger: Logger) {}

  on(owner: string, listener: AgentListener): void {
    this.listeners.set(owner, listener);
  }

  off(owner: string): void {
    this.listeners.delete(owner);
  }

  emit(event: AgentEvent): void {
    for (const [owner, listener] of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.logger.error({ err, owner, event: event.type }, 'agent event listener failed');
      }
    }
  }
}
