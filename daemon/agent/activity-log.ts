// Recent agent activity for GET /api/dashboard/timeline: a bounded ring of timeline items fed by the
// agent event bus. RAM only — the durable record of conversations is their episodes (memory).
import type { TimelineItem } from '../../protocol/dashboard';
import { clip } from '../kernel/text';
import type { AgentEvent, AgentEvents } from './agent-events';

export class ActivityLog {
  private readonly items: TimelineItem[] = [];
  private seq = 0;

  constructor(private readonly capacity = 500) {}

  listen(events: AgentEvents): void {
    events.on('activity-log', (e) => this.add(e));
  }

  /** Newest first. */
  recent(limit: number): TimelineItem[] {
    return this.items.slice(-limit).reverse();
  }

  private add(e: AgentEvent): void {
    if (e.type === 'knowledge_extracted') return; // facts show in the memory views, not the timeline
    const item = this.toItem(e);
    this.items.push(item);
    if (this.items.length > this.capacity) this.items.splice(0, this.items.length - this.capacity);
  }

  private toItem(e: Exclude<AgentEvent, { type: 'knowledge_extracted' }>): TimelineItem {
    const base = { id: `act_${++this.seq}`, at: e.at, session_id: e.sessionId };
    switch (e.type) {
      case 'turn_finished':
        return { ...base, kind: 'turn', title: clip(e.text, 200), detail: clip(e.answer, 500) };
      case 'session_opened':
        return { ...base, kind: 'session_opened', title: 'session opened', detail: null };
      case 'session_closed':
        return { ...base, kind: 'session_closed', title: `session ended (${e.reason})`, detail: e.episodeId };
      case 'tool_denied':
        return { ...base, kind: 'tool_denied', title: `refused ${e.tool}`, detail: clip(e.reason, 500) };
    }
  }
}
