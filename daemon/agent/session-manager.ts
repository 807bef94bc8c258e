// Owns the live sessions (spec 4.13 /v1/session, 1.3 working memory): opening and resuming,
// attaching clients, serialising turns, and ending — which clears working memory and writes the
// session's episode. It also implements memory's SessionPort so snapshots can read, branch and
// restore a live session. Sessions live in RAM: after a restart a resume by id is NOT_FOUND.
//
// What one client can take is bounded (docs/protocol.md "Limits"): sessions per connection and per
// principal, sessions in all, and the bytes all sessions hold. Room is made by ending sessions that
// have no client and no turn, oldest first — never one a client is attached to — and by compacting
// the oldest conversation into episodes; only when neither is possible is a new session refused.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError, notFound } from '../kernel/errors';
import type { AgentMetrics } from './agent-metrics';
import type { MemoryService } from '../memory/memory-service';
import type { SessionPort, SessionState } from '../memory/session-port';
import type { ChatMessage } from '../kernel/conversation';
import type { BrainMessageOf } from '../../protocol/session';
import type { AgentEvents } from './agent-events';
import type { ApprovalEvent } from '../kernel/events';
import { approvalNote, continues, type ApprovalResolution } from './continuation';
import { ADMIN_OWNER, Session, SessionBusyError, type ConversationEntry, type SessionClient, type SessionLimits, type SessionOwner } from './session';
import type { TurnOptions, TurnResult, TurnRunner } from './turn-runner';

export type CloseReason = BrainMessageOf<'session_closed'>['payload']['reason'];

export interface SessionManagerOptions {
  maxSessions: number;
  /** Open sessions one connection may have opened (settings agent.max_sessions_per_connection). */
  maxPerConnection: number;
  /** Open sessions one principal may hold (settings agent.max_sessions_per_principal). */
  maxPerPrincipal: number;
  /** Bytes all sessions together may hold, spans waiting for their episode included (agent.session_memory_bytes). */
  memoryBytes: number;
  /** A session without clients ends after this long without a turn. */
  idleMs: number;
  limits: SessionLimits;
}

export interface SessionManagerDeps {
  turns: TurnRunner;
  episodes: Pick<MemoryService, 'recordEpisode'> | null;
  events: AgentEvents;
  metrics: Pick<AgentMetrics, 'activeSessions'>;
  logger: Logger;
  options: SessionManagerOptions;
  now?: () => number;
}

export const DASHBOARD_SESSION = 'dashboard';

export const newSessionId = (): string => `ses_${randomBytes(12).toString('base64url')}`;
export const newTurnId = (): string => `turn_${randomBytes(9).toString('base64url')}`;

/** Over the budget, sessions give back room down to this share of it, so a chat at the edge does not compact on every turn. */
const BUDGET_LOW_WATER = 0.875;
/** Shed text waiting for its episode may take at most this share of the budget; past it a span is dropped (and logged). */
const PENDING_SHARE = 0.25;

export class SessionManager implements SessionPort {
  private readonly sessions = new Map<string, Session>();
  private sweeper: NodeJS.Timeout | null = null;
  private turnsTotal = 0;
  private readonly now: () => number;
  /** Bytes of shed entries whose compaction episode is still being written. */
  private pendingBytes = 0;
  private readonly compactions = new Set<Promise<void>>();

  constructor(private readonly deps: SessionManagerDeps) {
    this.now = deps.now ?? Date.now;
  }

  start(): void {
    const every = Math.max(1000, Math.min(60_000, Math.floor(this.deps.options.idleMs / 4)));
    this.sweeper = setInterval(() => void this.sweep(), every).unref();
  }

  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    await Promise.all([...this.sessions.keys()].map((id) => this.end(id, 'shutdown')));
    await Promise.all([...this.compactions]);
  }

  /** A new session for `owner`, or the open session `id` (resume; limits apply to new sessions only). */
  open(id?: string, owner: SessionOwner = ADMIN_OWNER): Session {
    if (id !== undefined && id !== '') {
      const existing = this.sessions.get(id);
      if (!existing && id !== DASHBOARD_SESSION) throw notFound('session', id);
      if (existing) return existing;
    }
    this.makeRoom(owner);
    const session = new Session(id || newSessionId(), this.now(), this.deps.options.limits, owner, (s, entries) => this.compacted(s, entries));
    this.sessions.set(session.id, session);
    this.deps.events.emit({ type: 'session_opened', sessionId: session.id, at: this.now() / 1000 });
    return session;
  }

  /** Bytes held by all sessions, plus shed text still waiting for its episode. */
  heldBytes(): number {
    let total = this.pendingBytes;
    for (const s of this.sessions.values()) total += s.bytes;
    return total;
  }

  /**
   * Enforces the per-connection, per-principal and global limits for one more session of `owner`:
   * refuses past the connection's limit; past the others ends the oldest session without clients
   * or turns (the principal's own at its limit, anyone's at the global one), else refuses.
   */
  private makeRoom(owner: SessionOwner): void {
    const { maxPerConnection, maxPerPrincipal, maxSessions } = this.deps.options;
    let ofConnection = 0;
    let ofPrincipal = 0;
    let oldestOwn: Session | undefined;
    let oldestAny: Session | undefined;
    for (const s of this.sessions.values()) {
      if (owner.connection !== undefined && s.owner.connection === owner.connection) ofConnection++;
      const own = s.owner.principal === owner.principal;
      if (own) ofPrincipal++;
      if (!evictable(s)) continue;
      if (!oldestAny || s.lastActivity < oldestAny.lastActivity) oldestAny = s;
      if (own && (!oldestOwn || s.lastActivity < oldestOwn.lastActivity)) oldestOwn = s;
    }
    if (ofConnection >= maxPerConnection) {
      throw new AppError('RATE_LIMITED', `this connection already opened ${ofConnection} sessions that are still open (agent.max_sessions_per_connection); close one (session_close) before opening another`, { scope: 'connection', limit: maxPerConnection, open: ofConnection });
    }
    if (ofPrincipal >= maxPerPrincipal) {
      if (!oldestOwn) throw new AppError('RATE_LIMITED', `you hold ${ofPrincipal} open sessions, each with a client or a turn (agent.max_sessions_per_principal); close one first`, { scope: 'principal', limit: maxPerPrincipal, open: ofPrincipal });
      this.evict(oldestOwn);
      if (oldestAny === oldestOwn) oldestAny = undefined;
    }
    if (this.sessions.size >= maxSessions) {
      const victim = oldestAny ?? this.oldestEvictable();
      if (!victim) throw new AppError('UNAVAILABLE', `the brain holds ${this.sessions.size} open sessions, each with a client or a turn; close one or try later`, { scope: 'brain', limit: maxSessions, open: this.sessions.size });
      this.evict(victim);
    }
  }

  private oldestEvictable(): Session | undefined {
    let oldest: Session | undefined;
    for (const s of this.sessions.values()) if (evictable(s) && (!oldest || s.lastActivity < oldest.lastActivity)) oldest = s;
    return oldest;
  }

  /** Ends a session without clients or turns to make room; its slot and bytes are free at once. */
  private evict(session: Session): void {
    this.deps.logger.info({ session_id: session.id, principal: session.owner.principal, bytes: session.bytes }, 'ended an idle session without clients to make room');
    this.end(session.id, 'evicted').catch((err: unknown) => this.deps.logger.error({ err, session_id: session.id }, 'evicting a session failed'));
  }

  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  attach(session: Session, client: SessionClient): void {
    session.clients.add(client);
    this.publishGauge();
  }

  detach(session: Session, client: SessionClient): void {
    if (session.clients.delete(client)) {
      session.lastActivity = this.now();
      this.publishGauge();
    }
  }

  /** Queues a turn behind the session's earlier turns; resolves with its result. */
  submit(session: Session, text: string, turnId: string, options: TurnOptions = {}): Promise<TurnResult> {
    if (session.ended) return Promise.reject(notFound('session', session.id));
    let result: TurnResult | undefined;
    return session
      .enqueue(turnId, async (signal) => {
        this.turnsTotal++;
        try {
          result = await this.deps.turns.run(session, turnId, text, signal, options);
        } finally {
          this.enforceBudget(session);
        }
      })
      .then(() => result!);
  }

  /**
   * Brings the bytes all sessions hold back under agent.session_memory_bytes: first ends sessions
   * without clients or turns (oldest first; their episode keeps what was said), then compacts the
   * others, least recently active first — `current` (the session whose turn just ran) last.
   */
  enforceBudget(current?: Session): void {
    const budget = this.deps.options.memoryBytes;
    let total = this.heldBytes();
    if (total <= budget) return;
    const target = Math.floor(budget * BUDGET_LOW_WATER);
    const byAge = [...this.sessions.values()].sort((a, b) => (a === current ? 1 : b === current ? -1 : a.lastActivity - b.lastActivity));
    for (const s of byAge) {
      if (total <= target) return;
      if (!evictable(s) || s === current) continue;
      total -= s.bytes;
      this.evict(s);
    }
    let compacted = 0;
    for (const s of byAge) {
      if (total <= target) break;
      if (s.ended) continue;
      const freed = s.compact(Math.max(0, s.bytes - (total - target)));
      total -= freed;
      if (freed > 0) compacted++;
    }
    if (compacted > 0) this.deps.logger.info({ sessions: compacted, held_bytes: this.heldBytes(), budget_bytes: budget }, 'session memory was over its budget; compacted the oldest conversations');
  }

  /** Ends a session for everyone: cancels its turns, tells its clients, writes its episode. */
  async end(id: string, reason: CloseReason): Promise<string | null> {
    const session = this.sessions.get(id);
    if (!session || session.ended) return null;
    session.ended = true;
    // The slot is free at once (an eviction makes room synchronously); the text goes when the episode is written.
    this.sessions.delete(id);
    this.pendingBytes += session.bytes;
    const held = session.bytes;
    await session.drain();
    const episodeId = await this.writeEpisode(session);
    this.pendingBytes -= held;
    session.release();
    session.broadcast({ type: 'session_closed', session_id: id, payload: { reason, episode_id: episodeId } });
    session.clients.clear();
    this.publishGauge();
    this.deps.events.emit({ type: 'session_closed', sessionId: id, reason, episodeId, at: this.now() / 1000 });
    return episodeId;
  }

  /**
   * Tells the clients of the session that asked for a held tool call (spec 2.6) what became of it:
   * approval_requested when it is held, approval_resolved when it ends, and after an approval the
   * tool's outcome as a tool_result (call_id = request_id). An approved or rejected call is then
   * continued: a turn queued behind the session's others hands the model the outcome, and its answer
   * streams to the session (continuation.ts). A session that has ended (or is in another brain's RAM
   * since a restart) has no one to tell.
   */
  approval(event: ApprovalEvent): void {
    const session = this.sessions.get(event.sessionId);
    if (!session || session.ended) return;
    const base = { session_id: session.id } as const;
    if (event.type === 'approval_requested') {
      session.broadcast({
        type: 'approval_requested',
        ...base,
        payload: { request_id: event.requestId, session_id: session.id, tool_name: event.tool, args: event.args, safety_level: event.safety, created_at: event.createdAt, status: 'pending', turn_id: event.turnId },
      });
      return;
    }
    session.broadcast({ type: 'approval_resolved', ...base, payload: { request_id: event.requestId, turn_id: event.turnId, tool_name: event.tool, status: event.status } });
    if (event.status === 'approved' && event.result) {
      session.broadcast({ type: 'tool_result', ...base, payload: { turn_id: event.turnId, call_id: event.requestId, name: event.tool, status: event.result.status, summary: event.result.summary } });
    }
    if (continues(event)) this.resume(session, event);
    else this.note(session, event);
  }

  /** Queues the continuation turn; a session whose queue is full gets the outcome as a line of its conversation instead. */
  private resume(session: Session, event: ApprovalResolution): void {
    const turnId = newTurnId();
    session
      .enqueue(turnId, async (signal) => {
        this.turnsTotal++;
        try {
          await this.deps.turns.resume(session, turnId, event, signal);
        } finally {
          this.enforceBudget(session);
        }
      })
      .catch((err: unknown) => {
        if (!(err instanceof SessionBusyError)) throw err;
        this.deps.logger.warn({ session_id: session.id, request_id: event.requestId, queued: err.pending }, 'the session\'s turn queue is full; the approval outcome was noted in its conversation without a continuation');
        this.note(session, event);
      })
      .catch((err: unknown) => this.deps.logger.error({ err, session_id: session.id, request_id: event.requestId }, 'the continuation of an approval failed'));
  }

  /** The outcome as a line of the conversation, so the next turn's model (and a resumed client's history) knows it. */
  private note(session: Session, event: ApprovalResolution): void {
    session.record({ message: { role: 'assistant', content: approvalNote(event) }, turnId: event.turnId, at: this.now() });
    this.enforceBudget(session);
  }

  stats(): { open: number; withClients: number; clients: number; turnsTotal: number } {
    let withClients = 0;
    let clients = 0;
    for (const s of this.sessions.values()) {
      if (s.clients.size > 0) withClients++;
      clients += s.clients.size;
    }
    return { open: this.sessions.size, withClients, clients, turnsTotal: this.turnsTotal };
  }

  // ── SessionPort (daemon/memory/session-port.ts): snapshots, branches, restores ─────────────────
  read(sessionId: string): SessionState | undefined {
    const s = this.sessions.get(sessionId);
    return s ? { messages: structuredClone(s.messages()), working: s.working.entries() } : undefined;
  }

  create(state: SessionState): string {
    const session = this.open();
    this.load(session, state);
    return session.id;
  }

  replace(sessionId: string, state: SessionState): void {
    const session = this.sessions.get(sessionId);
    if (!session) throw notFound('session', sessionId);
    this.load(session, state);
  }

  private load(session: Session, state: SessionState): void {
    session.restore(
      state.messages.filter(isText).map((m) => ({ role: m.role, content: m.content })),
      state.working,
      this.now(),
    );
    this.enforceBudget(session);
  }

  /** Writes the entries a session shed as a 'compaction' episode, so compacting loses nothing that fits. */
  private compacted(session: Session, entries: ConversationEntry[]): void {
    if (!this.deps.episodes) return;
    const bytes = entries.reduce((n, e) => n + Buffer.byteLength(e.message.content), 0);
    if (this.pendingBytes + bytes > this.deps.options.memoryBytes * PENDING_SHARE) {
      this.deps.logger.warn({ session_id: session.id, entries: entries.length, bytes, pending_bytes: this.pendingBytes }, 'episodes are being written slower than conversation is compacted; dropped a span without its summary');
      return;
    }
    this.pendingBytes += bytes;
    const write = this.deps.episodes
      .recordEpisode({ sessionId: session.id, messages: entries.map((e) => e.message), reason: 'compaction', startedAt: entries[0]!.at, endedAt: entries[entries.length - 1]!.at })
      .then(
        () => undefined,
        (err: unknown) => this.deps.logger.error({ err, session_id: session.id }, 'could not write the episode of a compacted span'),
      )
      .finally(() => {
        this.pendingBytes -= bytes;
        this.compactions.delete(write);
      });
    this.compactions.add(write);
  }

  private async writeEpisode(session: Session): Promise<string | null> {
    if (!this.deps.episodes || session.transcript.length === 0) return null;
    const t = session.transcript;
    try {
      const episode = await this.deps.episodes.recordEpisode({
        sessionId: session.id,
        messages: t.map((e) => e.message),
        reason: 'session_end',
        startedAt: t[0]!.at,
        endedAt: t[t.length - 1]!.at,
      });
      return episode?.id ?? null;
    } catch (err) {
      // The session still ends (its clients are told); the lost summary is an error worth a log line.
      this.deps.logger.error({ err, session_id: session.id }, 'could not write the episode of an ended session');
      return null;
    }
  }

  private async sweep(): Promise<void> {
    const cutoff = this.now() - this.deps.options.idleMs;
    for (const s of [...this.sessions.values()]) {
      if (s.clients.size === 0 && !s.busy && s.lastActivity < cutoff) await this.end(s.id, 'idle');
    }
  }

  private publishGauge(): void {
    this.deps.metrics.activeSessions(this.stats().withClients);
  }
}

/** A session the brain may end to make room: no client is attached and no turn is running or waiting. */
const evictable = (s: Session): boolean => s.clients.size === 0 && !s.busy && !s.ended;

const isText = (m: ChatMessage): m is Extract<ChatMessage, { role: 'user' | 'assistant' }> => (m.role === 'user' || m.role === 'assistant') && !('tool_calls' in m && m.tool_calls?.length);
