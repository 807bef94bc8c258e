// What one /v1/session connection does with each valid client message (protocol/session.ts). A
// connection is attached to at most one session at a time; session_open switches it. A client that
// knows only the spec's envelope may skip session_open: its first text_command opens the session
// (issue 9 item 19).
import type { Logger } from 'pino';
import { AppError } from '../kernel/errors';
import { SESSION_PROTOCOL_VERSION, type BrainMessage, type ClientMessage, type ClientMessageOf } from '../../protocol/session';
import { SessionBusyError, type Session, type SessionOwner } from '../agent/session';
import { newTurnId, type SessionManager } from '../agent/session-manager';
import type { WsClient } from './ws-client';

const DEFAULT_HISTORY = 20;

export class SessionConnection {
  private session: Session | null = null;

  private readonly owner: SessionOwner;

  constructor(
    private readonly client: WsClient,
    private readonly sessions: SessionManager,
    private readonly logger: Logger,
    principal: string,
  ) {
    this.owner = { principal, connection: client.id };
  }

  handle(message: ClientMessage): void {
    switch (message.type) {
      case 'session_open':
        return this.open(message);
      case 'text_command':
        return this.command(message);
      case 'turn_cancel':
        return this.cancel(message);
      case 'session_close':
        return this.closeSession(message.session_id);
      case 'session_leave':
        return this.leave(message.session_id);
      case 'ping':
        return this.client.send({ type: 'pong', session_id: message.session_id, payload: message.payload.nonce === undefined ? {} : { nonce: message.payload.nonce } });
      case 'telemetry':
        return this.telemetry(message);
    }
  }

  /** The session this connection is attached to, if any. */
  sessionId(): string | null {
    return this.attached()?.id ?? null;
  }

  /** Joins an open session on the brain's initiative (a handoff): as session_open would, with its history. */
  join(sessionId: string): boolean {
    return this.attachTo(sessionId, sessionId, DEFAULT_HISTORY) !== null;
  }

  /** The session was handed to another device: detach, and say so (session_closed reason handed_off). */
  handOff(sessionId: string): boolean {
    const session = this.attached();
    if (!session || session.id !== sessionId) return false;
    this.sessions.detach(session, this.client);
    this.session = null;
    this.client.send({ type: 'session_closed', session_id: session.id, payload: { reason: 'handed_off', episode_id: null } });
    return true;
  }

  /** The socket closed: the session stays open for its other clients (and resumable by id). */
  closed(): void {
    if (this.session) this.sessions.detach(this.session, this.client);
    this.session = null;
  }

  error(code: string, message: string, sessionId: string, details: unknown = null, turnId?: string): void {
    this.client.send({ type: 'error', session_id: sessionId, payload: { code, message, details, ...(turnId ? { turn_id: turnId } : {}) } });
  }

  private open(message: ClientMessageOf<'session_open'>): void {
    this.attachTo(message.session_id, message.session_id || undefined, message.payload.history_limit ?? DEFAULT_HISTORY);
  }

  /** Opens (id undefined) or joins a session, attaches this connection and says so; null when refused. */
  private attachTo(requested: string, id: string | undefined, historyLimit: number): Session | null {
    let session: Session;
    try {
      session = this.sessions.open(id, this.owner);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      this.error(err.code, err.message, requested, err.details);
      return null;
    }
    if (this.session && this.session !== session) this.sessions.detach(this.session, this.client);
    const resumed = session.conversation.length > 0 || session.clients.size > 0 || id !== undefined;
    this.session = session;
    this.sessions.attach(session, this.client);
    const reply: BrainMessage = {
      type: 'session_opened',
      session_id: session.id,
      payload: { resumed, protocol: SESSION_PROTOCOL_VERSION, history: session.history(historyLimit), clients: session.clients.size },
    };
    this.client.send(reply);
    return session;
  }

  private attached(): Session | null {
    return this.session && !this.session.ended ? this.session : null;
  }

  private current(sessionId: string): Session | null {
    const session = this.attached();
    if (session && session.id === sessionId) return session;
    this.error('NOT_IN_SESSION', sessionId === '' ? 'open a session first (session_open)' : `this connection is not attached to session ${sessionId}; send session_open with it first`, sessionId);
    return null;
  }

  /**
   * The session a text_command goes to. "" means the attached session; on a connection attached to
   * none, "" or an id that is not open opens a new session and an open id joins it, as session_open would.
   */
  private commandSession(sessionId: string): Session | null {
    const session = this.attached();
    if (session && (sessionId === '' || sessionId === session.id)) return session;
    if (session) return this.current(sessionId);
    const open = sessionId !== '' && this.sessions.get(sessionId) !== undefined;
    return this.attachTo(sessionId, open ? sessionId : undefined, DEFAULT_HISTORY);
  }

  private command(message: ClientMessageOf<'text_command'>): void {
    const session = this.commandSession(message.session_id);
    if (!session) return;
    const turnId = message.payload.turn_id ?? newTurnId();
    this.sessions.submit(session, message.payload.text, turnId).catch((err: unknown) => {
      if (err instanceof SessionBusyError) return this.error('BUSY', err.message, session.id, { pending: err.pending }, turnId);
      if (err instanceof AppError) return this.error(err.code, err.message, session.id, err.details, turnId);
      this.logger.error({ err, session_id: session.id, turn_id: turnId }, 'turn could not run');
      this.error('TURN_FAILED', 'the turn could not run; see the brain log', session.id, null, turnId);
    });
  }

  private cancel(message: ClientMessageOf<'turn_cancel'>): void {
    const session = this.current(message.session_id);
    if (session && !session.cancel(message.payload.turn_id)) this.error('NOT_FOUND', 'no such turn is running or waiting', session.id, null, message.payload.turn_id);
  }

  private closeSession(sessionId: string): void {
    const session = this.current(sessionId);
    if (!session) return;
    this.session = null;
    this.sessions.end(session.id, 'closed_by_client').catch((err: unknown) => {
      this.logger.error({ err, session_id: session.id }, 'ending a session failed');
      this.error('INTERNAL', 'the session could not be ended cleanly; see the brain log', session.id);
    });
  }

  private leave(sessionId: string): void {
    const session = this.current(sessionId);
    if (!session) return;
    this.sessions.detach(session, this.client);
    this.session = null;
    this.client.send({ type: 'session_closed', session_id: session.id, payload: { reason: 'left', episode_id: null } });
  }

  private telemetry(message: ClientMessageOf<'telemetry'>): void {
    const session = this.current(message.session_id);
    if (!session) return;
    for (const other of session.clients) if (other !== this.client) other.send({ type: 'telemetry', session_id: session.id, payload: message.payload });
  }
}
