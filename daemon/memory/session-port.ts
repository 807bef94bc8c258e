// The port between session snapshots (spec 1.3: snapshot, branch, restore conversation plus working
// memory) and whoever owns live sessions. The agent's session manager implements it; memory only
// stores and replays states. Sync or async both work: every call is awaited.
import type { ChatMessage } from '../kernel/conversation';
import { AppError, notFound } from '../kernel/errors';
import type { WorkingItem } from './working-memory';

export interface SessionState {
  /** The conversation, oldest first, exactly as the turn loop keeps it. */
  messages: ChatMessage[];
  /** Working memory items, least to most recently used (WorkingMemory.entries()). */
  working: WorkingItem[];
}

type MaybePromise<T> = T | Promise<T>;

export interface SessionPort {
  /** The current state of a session, or undefined when no such session exists. */
  read(sessionId: string): MaybePromise<SessionState | undefined>;
  /** Starts a new session holding this state (branching); returns its id. */
  create(state: SessionState, meta: { branchedFrom: { sessionId: string; snapshotId: string } }): MaybePromise<string>;
  /** Replaces a session's state (restore). Throws AppError NOT_FOUND when the session is gone. */
  replace(sessionId: string, state: SessionState): MaybePromise<void>;
}

/** A plain in-memory implementation: used by tests, and by the brain until the agent's sessions exist. */
export class InMemorySessions implements SessionPort {
  private readonly sessions = new Map<string, SessionState>();
  private next = 1;

  read(sessionId: string): SessionState | undefined {
    const s = this.sessions.get(sessionId);
    return s ? structuredClone(s) : undefined;
  }

  create(state: SessionState): string {
    const id = `session-${this.next++}`;
    this.sessions.set(id, structuredClone(state));
    return id;
  }

  replace(sessionId: string, state: SessionState): void {
    if (!this.sessions.has(sessionId)) throw notFound('session', sessionId);
    this.sessions.set(sessionId, structuredClone(state));
  }

  /** Test/seed helper: put a session under a chosen id. */
  put(sessionId: string, state: SessionState): void {
    this.sessions.set(sessionId, structuredClone(state));
  }
}

/**
 * The brain builds memory before the agent (the agent searches memory), but snapshots need the
 * agent's live sessions: memory is handed this port, and the composition root attaches the session
 * manager once it exists. Calls before that fail with UNAVAILABLE instead of reaching a stand-in.
 */
export class DeferredSessionPort implements SessionPort {
  private target: SessionPort | undefined;

  attach(target: SessionPort): void {
    this.target = target;
  }

  private live(): SessionPort {
    if (!this.target) throw new AppError('UNAVAILABLE', 'sessions are not running yet');
    return this.target;
  }

  read(sessionId: string): MaybePromise<SessionState | undefined> {
    return this.live().read(sessionId);
  }

  create(state: SessionState, meta: { branchedFrom: { sessionId: string; snapshotId: string } }): MaybePromise<string> {
    return this.live().create(state, meta);
  }

  replace(sessionId: string, state: SessionState): MaybePromise<void> {
    return this.live().replace(sessionId, state);
  }
}
