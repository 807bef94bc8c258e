// The open /v1/session sockets and the principal each was opened by (kernel port ClientConnections):
// what lets the pairing capability close a revoked device's sockets at once and hand a live session
// from one device's sockets to another's (docs/pairing.md "Revoke", "Handoff"), without reaching
// into fastify or ws. session-routes.ts adds a socket when it is accepted and removes it when it closes.
import { AppError, notFound } from '../kernel/errors';
import type { ClientConnection, ClientConnections } from '../kernel/ports';
import type { SessionManager } from '../agent/session-manager';
import type { BrainMessage } from '../../protocol/session';

/** What the registry needs of one accepted socket. */
export interface RegisteredSocket {
  readonly principal: string;
  readonly id: string;
  /** The session the socket is attached to, if any. */
  sessionId(): string | null;
  /** Attaches the socket to an open session, as session_open would (it is sent session_opened with the history). */
  join(sessionId: string): boolean;
  /** Detaches the socket from the session, telling it session_closed reason handed_off. */
  handOff(sessionId: string): boolean;
  close(code: number, reason: string): void;
  /** Sends a frame to this socket (dropped when it is closing). */
  send(frame: BrainMessage): void;
}

export class ConnectionRegistry implements ClientConnections {
  private readonly sockets = new Set<RegisteredSocket>();

  constructor(private readonly sessions: Pick<SessionManager, 'get'>) {}

  /** Registers an accepted socket; the returned function removes it (call it when the socket closes). */
  add(socket: RegisteredSocket): () => void {
    this.sockets.add(socket);
    return () => this.sockets.delete(socket);
  }

  list(): ClientConnection[] {
    return [...this.sockets].map((s) => ({ principal: s.principal, connection: s.id, sessionId: s.sessionId() }));
  }

  close(principal: string, code: number, reason: string): number {
    const mine = [...this.sockets].filter((s) => s.principal === principal);
    for (const s of mine) {
      // Gone from the registry at once: a revoked device is never handed a session while its close completes.
      this.sockets.delete(s);
      s.close(code, reason);
    }
    return mine.length;
  }

  broadcast(frame: BrainMessage): number {
    for (const s of this.sockets) s.send({ ...frame, session_id: s.sessionId() ?? frame.session_id });
    return this.sockets.size;
  }

  handoff(sessionId: string, from: string, to: string): { attached: number; detached: number } {
    const session = this.sessions.get(sessionId);
    if (!session || session.ended) throw notFound('session', sessionId);
    const targets = [...this.sockets].filter((s) => s.principal === to);
    if (targets.length === 0) throw new AppError('CONFLICT', 'the target device has no open /v1/session connection to hand the session to', { to, session_id: sessionId });
    let attached = 0;
    for (const s of targets) if (s.sessionId() === sessionId || s.join(sessionId)) attached++;
    let detached = 0;
    for (const s of this.sockets) if (s.principal === from && s.principal !== to && s.handOff(sessionId)) detached++;
    return { attached, detached };
  }
}
