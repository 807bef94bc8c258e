// One live session: its conversation, working memory, attached clients and turn queue. Turns of a
// session run strictly one after another (a second message waits for the first answer); different
// sessions run concurrently. The queue is bounded: a client that floods a session gets BUSY.
import type { ChatMessage } from '../providers/provider';
import type { BrainMessage, HistoryMessage } from '../../protocol/session';
import { WorkingMemory, type WorkingMemoryLimits } from '../memory/working-memory';

export interface SessionClient {
  readonly id: string;
  readonly kind: 'websocket' | 'http';
  send(message: BrainMessage): void;
}

export interface ConversationEntry {
  message: Extract<ChatMessage, { role: 'user' | 'assistant' }>;
  turnId: string;
  /** Epoch ms. */
  at: number;
}

export class SessionBusyError extends Error {
  constructor(readonly pending: number) {
    super(`the session already has ${pending} turns waiting; wait for an answer before sending more`);
    this.name = 'SessionBusyError';
  }
}

export interface SessionLimits {
  /** Conversation entries kept (the oldest go first; the episode covers the whole session). */
  maxEntries: number;
  maxQueuedTurns: number;
  working: WorkingMemoryLimits;
}

export class Session {
  readonly clients = new Set<SessionClient>();
  readonly working: WorkingMemory;
  /** Every entry since the session opened, for its episode (bounded like the conversation, but larger). */
  readonly transcript: ConversationEntry[] = [];
  conversation: ConversationEntry[] = [];
  /** The last routed user message, which a routing correction refers to. */
  lastRoutedText: string | null = null;
  lastActivity: number;
  ended = false;
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;
  private running: { turnId: string; abort: AbortController } | null = null;
  private readonly waiting = new Map<string, AbortController>();

  constructor(
    readonly id: string,
    readonly createdAt: number,
    private readonly limits: SessionLimits,
  ) {
    this.lastActivity = createdAt;
    this.working = new WorkingMemory(limits.working);
  }

  broadcast(message: BrainMessage): void {
    for (const client of this.clients) client.send(message);
  }

  /** Runs `turn` after every earlier turn of this session has finished. */
  enqueue(turnId: string, turn: (signal: AbortSignal) => Promise<void>): Promise<void> {
    if (this.queued >= this.limits.maxQueuedTurns) return Promise.reject(new SessionBusyError(this.queued));
    this.queued++;
    const abort = new AbortController();
    this.waiting.set(turnId, abort);
    const run = async (): Promise<void> => {
      this.waiting.delete(turnId);
      this.running = { turnId, abort };
      try {
        await turn(abort.signal);
      } finally {
        this.running = null;
        this.queued--;
      }
    };
    const result = this.tail.then(run);
    // The chain must survive a failed turn; the failure itself is reported through `result`.
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Aborts the running turn, or a queued one by id. Returns whether anything was cancelled. */
  cancel(turnId?: string): boolean {
    if (turnId !== undefined && this.waiting.has(turnId)) {
      this.waiting.get(turnId)!.abort();
      return true;
    }
    if (this.running && (turnId === undefined || this.running.turnId === turnId)) {
      this.running.abort.abort();
      return true;
    }
    return false;
  }

  /** Cancels everything and resolves when the queue is empty. */
  async drain(): Promise<void> {
    for (const abort of this.waiting.values()) abort.abort();
    this.running?.abort.abort();
    await this.tail;
  }

  get busy(): boolean {
    return this.queued > 0;
  }

  record(entry: ConversationEntry): void {
    this.conversation.push(entry);
    if (this.conversation.length > this.limits.maxEntries) this.conversation.splice(0, this.conversation.length - this.limits.maxEntries);
    this.transcript.push(entry);
    if (this.transcript.length > this.limits.maxEntries * 4) this.transcript.splice(0, this.transcript.length - this.limits.maxEntries * 4);
    this.lastActivity = entry.at;
  }

  history(limit: number): HistoryMessage[] {
    return this.conversation.slice(Math.max(0, this.conversation.length - limit)).map((e) => ({ role: e.message.role, text: e.message.content, turn_id: e.turnId, at: e.at / 1000 }));
  }

  messages(): ChatMessage[] {
    return this.conversation.map((e) => e.message);
  }
}
