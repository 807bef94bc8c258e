// One live session: its conversation, working memory, attached clients and turn queue. Turns of a
// session run strictly one after another (a second message waits for the first answer); different
// sessions run concurrently. The queue is bounded: a client that floods a session gets BUSY.
//
// What a session holds in RAM is bounded and counted in bytes (UTF-8 length of the texts, summed as
// entries come and go, never measured on the heap): past its transcript cap the oldest entries are
// shed — in chunks, down to 3/4 of the cap, so one summary covers many — and handed to `compacted`,
// which writes them as an episode (memory tier "episodes") before they are gone.
import type { ChatMessage } from '../kernel/conversation';
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

/** Who a session was opened by: the principal it counts against, and the connection that opened it. */
export interface SessionOwner {
  /** The authenticated identity behind the request (today every API-token client is "admin"). */
  readonly principal: string;
  /** The WebSocket connection that opened the session, if any (its per-connection limit). */
  readonly connection?: string;
}

export const ADMIN_PRINCIPAL = 'admin';
export const ADMIN_OWNER: SessionOwner = { principal: ADMIN_PRINCIPAL };

/** Bytes an entry is counted as: the UTF-8 length of its text. */
const entryBytes = (e: ConversationEntry): number => Buffer.byteLength(e.message.content);

/** Transcript entries a session sheds at a time go down to this share of a cap. */
const LOW_WATER = 0.75;

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
  /** Bytes of transcript (and restored conversation) one session keeps before it compacts. */
  transcriptBytes: number;
  working: WorkingMemoryLimits;
}

/** Receives the entries a session shed, oldest first, to summarise them before they are gone. */
export type CompactionSink = (session: Session, entries: ConversationEntry[]) => void;

export class Session {
  readonly clients = new Set<SessionClient>();
  readonly working: WorkingMemory;
  /** Every entry since the session opened, for its episode (bounded like the conversation, but larger). */
  readonly transcript: ConversationEntry[] = [];
  /** The model's view: the newest entries of the transcript, or the state a snapshot restored. */
  conversation: ConversationEntry[] = [];
  /** The last routed user message, which a routing correction refers to. */
  lastRoutedText: string | null = null;
  lastActivity: number;
  ended = false;
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;
  private running: { turnId: string; abort: AbortController } | null = null;
  private readonly waiting = new Map<string, AbortController>();
  private transcriptBytes = 0;
  /** Conversation entries a snapshot restored: held by the conversation only, not the transcript. */
  private readonly restored = new WeakSet<ConversationEntry>();
  private restoredBytes = 0;

  constructor(
    readonly id: string,
    readonly createdAt: number,
    private readonly limits: SessionLimits,
    readonly owner: SessionOwner = ADMIN_OWNER,
    private readonly compacted: CompactionSink = () => undefined,
  ) {
    this.lastActivity = createdAt;
    this.working = new WorkingMemory(limits.working);
  }

  /** Bytes of text this session holds: working memory, transcript and restored conversation. */
  get bytes(): number {
    return this.working.bytes + this.transcriptBytes + this.restoredBytes;
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
    if (this.conversation.length > this.limits.maxEntries) this.dropConversation(this.conversation.length - this.limits.maxEntries);
    this.transcript.push(entry);
    this.transcriptBytes += entryBytes(entry);
    this.lastActivity = entry.at;
    const maxCount = this.limits.maxEntries * 4;
    if (this.transcript.length > maxCount || this.textBytes > this.limits.transcriptBytes) {
      this.shed(Math.floor(this.limits.transcriptBytes * LOW_WATER), Math.max(1, Math.floor(maxCount * LOW_WATER)), 1);
    }
  }

  /** Replaces the conversation with a snapshot's (restore, branch); the transcript is kept for the episode. */
  restore(messages: readonly ConversationEntry['message'][], working: Parameters<WorkingMemory['restore']>[0], at: number): void {
    this.dropConversation(this.conversation.length);
    for (const message of messages) {
      const entry: ConversationEntry = { message, turnId: 'restored', at };
      this.restored.add(entry);
      this.restoredBytes += entryBytes(entry);
      this.conversation.push(entry);
    }
    this.working.restore(working);
  }

  /**
   * Gives back room for the brain-wide budget: sheds the oldest entries (compacted into an episode)
   * and least recently used working memory until at most `target` bytes are held. Returns the bytes freed.
   */
  compact(target: number): number {
    const before = this.bytes;
    this.shed(Math.max(0, target - this.working.bytes), Infinity, 0);
    if (this.bytes > target) this.working.shrinkTo(target - this.textBytes);
    return before - this.bytes;
  }

  /** Drops everything the session holds (it has ended and its episode is written). */
  release(): void {
    this.dropConversation(this.conversation.length);
    this.transcript.length = 0;
    this.transcriptBytes = 0;
    this.working.clear();
  }

  private get textBytes(): number {
    return this.transcriptBytes + this.restoredBytes;
  }

  /**
   * Sheds the oldest entries until the text is within `maxBytes` and the transcript within `maxCount`,
   * keeping at least `keep` entries. Restored entries go first: their snapshot already holds them.
   */
  private shed(maxBytes: number, maxCount: number, keep: number): void {
    const gone: ConversationEntry[] = [];
    const over = (): boolean => this.textBytes > maxBytes || this.transcript.length > maxCount;
    while (over() && this.conversation.length > 0 && this.restored.has(this.conversation[0]!)) this.dropConversation(1);
    while (over() && this.transcript.length > keep) {
      const oldest = this.transcript.shift()!;
      this.transcriptBytes -= entryBytes(oldest);
      if (this.conversation[0] === oldest) this.conversation.shift();
      gone.push(oldest);
    }
    if (gone.length > 0) this.compacted(this, gone);
  }

  private dropConversation(count: number): void {
    for (const e of this.conversation.splice(0, count)) if (this.restored.delete(e)) this.restoredBytes -= entryBytes(e);
  }

  history(limit: number): HistoryMessage[] {
    return this.conversation.slice(Math.max(0, this.conversation.length - limit)).map((e) => ({ role: e.message.role, text: e.message.content, turn_id: e.turnId, at: e.at / 1000 }));
  }

  messages(): ChatMessage[] {
    return this.conversation.map((e) => e.message);
  }
}
