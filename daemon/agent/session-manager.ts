// Owns the live sessions (spec 4.13 /v1/session, 1.3 working memory): opening and resuming,
// attaching clients, serialising turns, and ending — which clears working memory and writes the
// session's episode. It also implements memory's SessionPort so snapshots can read, branch and
// restore a live session. Sessions live in RAM: after a restart a resume by id is NOT_FOUND.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError, notFound } from '../errors';
import type { Metrics } from '../metrics/metrics';
import type { MemoryService } from '../memory/memory-service';
import type { SessionPort, SessionState } from '../memory/session-port';
import type { ChatMessage } from '../providers/provider';
import type { BrainMessageOf } from '../../protocol/session';
import type { AgentEvents } from './agent-events';
import { Session, type SessionClient, type SessionLimits } from './session';
import type { TurnResult, TurnRunner } from './turn-runner';

export type CloseReason = BrainMessageOf<'session_closed'>['payload']['reason'];

export interface SessionManagerOptions {
  maxSessions: number;
  /** A session without clients ends after this long without a turn. */
  idleMs: number;
  limits: SessionLimits;
}

export interface SessionManagerDeps {
  turns: TurnRunner;
  episodes: Pick<MemoryService, 'recordEpisode'> | null;
  events: AgentEvents;
  metrics: Metrics;
  logger: Logger;
  options: SessionManagerOptions;
  now?: () => number;
}

export const DASHBOARD_SESSION = 'dashboard';

export const newSessionId = (): string => `ses_${randomBytes(12).toString('base64url')}`;
export const newTurnId = (): string => `turn_${randomBytes(9).toString('base64url')}`;

export class SessionManager implements SessionPort {
  private readonly sessions = new Map<string, Session>();
  private sweeper: NodeJS.Timeout | null = null;
  private turnsTotal = 0;
  private readonly now: () => number;

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
  }

  /** A new session, or the open session `id` (resume). */
  open(id?: string): Session {
    if (id !== undefined && id !== '') {
      const existing = this.sessions.get(id);
      if (!existing && id !== DASHBOARD_SESSION) throw notFound('session', id);
      if (existing) return existing;
    }
    if (this.sessions.size >= this.deps.options.maxSessions) {
      throw new AppError('UNAVAILABLE', `the brain already holds ${this.sessions.size} open sessions; close one or try later`);
    }
    const session = new Session(id || newSessionId(), this.now(), this.deps.options.limits);
    this.sessions.set(session.id, session);
    this.deps.events.emit({ type: 'session_opened', sessionId: session.id, at: this.now() / 1000 });
    return session;
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
  submit(session: Session, text: string, turnId: string): Promise<TurnResult> {
    if (session.ended) return Promise.reject(notFound('session', session.id));
    let result: TurnResult | undefined;
    return session
      .enqueue(turnId, async (signal) => {
        this.turnsTotal++;
        result = await this.deps.turns.run(session, turnId, text, signal);
      })
      .then(() => result!);
  }

  /** Ends a session for everyone: cancels its turns, tells its clients, writes its episode. */
  async end(id: string, reason: CloseReason): Promise<string | null> {
    const session = this.sessions.get(id);
    if (!session || session.ended) return null;
    session.ended = true;
    await session.drain();
    this.sessions.delete(id);
    const episodeId = await this.writeEpisode(session);
    session.working.clear();
    session.broadcast({ type: 'session_closed', session_id: id, payload: { reason, episode_id: episodeId } });
    session.clients.clear();
    this.publishGauge();
    this.deps.events.emit({ type: 'session_closed', sessionId: id, reason, episodeId, at: this.now() / 1000 });
    return episodeId;
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
    const at = this.now();
    session.conversation = [];
    for (const m of state.messages) {
      if (isText(m)) session.conversation.push({ message: { role: m.role, content: m.content }, turnId: 'restored', at });
    }
    session.working.restore(state.working);
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
    this.deps.metrics.wsActiveSessions(this.stats().withClients);
  }
}

const isText = (m: ChatMessage): m is Extract<ChatMessage, { role: 'user' | 'assistant' }> => (m.role === 'user' || m.role === 'assistant') && !('tool_calls' in m && m.tool_calls?.length);
