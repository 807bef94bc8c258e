// The CLI's /v1/session client (protocol/session.ts): connect with the bearer token, open or resume
// a session, send messages and follow the session's events. Frames from the brain are validated
// against the same TypeBox schemas the brain uses; an unexpected frame is an error, not a guess.
import { WebSocket } from 'ws';
import { randomBytes } from 'node:crypto';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { BrainMessage, type BrainMessageOf, type ClientMessage } from '../../protocol/session';
import { BrainUnreachableError, type Connection } from '../connection';

const checkBrainMessage = TypeCompiler.Compile(BrainMessage);

export type TextResponse = BrainMessageOf<'text_response'>['payload'];

export class SessionError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SessionError';
  }
}

export const sessionUrl = (httpUrl: string): string => `${httpUrl.replace(/^http/, 'ws')}/v1/session`;

interface PendingTurn {
  resolve: (r: TextResponse) => void;
  reject: (e: Error) => void;
}

export class ChatSession {
  sessionId = '';
  private readonly turns = new Map<string, PendingTurn>();
  /** Waiters for continuation turns (turn_started.continues), by the turn they continue, oldest first. */
  private readonly continuations = new Map<string, PendingTurn[]>();
  private readonly listeners = new Set<(m: BrainMessage) => void>();
  private waiter: { type: BrainMessage['type']; resolve: (m: BrainMessage) => void; reject: (e: Error) => void } | null = null;
  private closed = false;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data: Buffer) => this.receive(data.toString('utf8')));
    socket.on('close', (code, reason) => this.fail(new SessionError('CLOSED', `the brain closed the connection (${code}${reason.length ? `: ${reason.toString()}` : ''})`)));
  }

  static connect(conn: Connection, timeoutMs = 10_000): Promise<ChatSession> {
    const socket = new WebSocket(sessionUrl(conn.url), ['svc.v1'], { headers: conn.token ? { authorization: `Bearer ${conn.token}` } : {}, handshakeTimeout: timeoutMs });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new ChatSession(socket)));
      socket.once('unexpected-response', (_req, res) => {
        socket.terminate();
        reject(new SessionError(res.statusCode === 401 ? 'UNAUTHORIZED' : 'HANDSHAKE', res.statusCode === 401 ? `the brain refused the token (401); it is in ${conn.home}/api-token or SVC_API_TOKEN` : `the brain refused the session (HTTP ${res.statusCode ?? '?'})`));
      });
      socket.once('error', (err) => reject(new BrainUnreachableError(conn.url, err)));
    });
  }

  /** Receives every frame of the session (deltas, tool calls, other clients' turns). */
  onMessage(listener: (m: BrainMessage) => void): void {
    this.listeners.add(listener);
  }

  offMessage(listener: (m: BrainMessage) => void): void {
    this.listeners.delete(listener);
  }

  async open(resumeId = ''): Promise<BrainMessageOf<'session_opened'>> {
    const reply = await this.request({ type: 'session_open', session_id: resumeId, payload: {} }, 'session_opened');
    this.sessionId = reply.session_id;
    return reply as BrainMessageOf<'session_opened'>;
  }

  /** Sends a message; resolves with the text_response that closes its turn. */
  ask(text: string): { turnId: string; done: Promise<TextResponse> } {
    const turnId = `cli_${randomBytes(6).toString('base64url')}`;
    const done = new Promise<TextResponse>((resolve, reject) => this.turns.set(turnId, { resolve, reject }));
    this.send({ type: 'text_command', session_id: this.sessionId, payload: { text, turn_id: turnId } });
    return { turnId, done };
  }

  /**
   * Resolves with the text_response of the next continuation of `turnId`: the turn the brain runs
   * after one of its held tool calls was approved or rejected. Register before resolving the request
   * (the continuation may start before the HTTP answer arrives).
   */
  continuation(turnId: string): { done: Promise<TextResponse>; forget(): void } {
    let waiter!: PendingTurn;
    const done = new Promise<TextResponse>((resolve, reject) => (waiter = { resolve, reject }));
    const waiting = this.continuations.get(turnId) ?? [];
    waiting.push(waiter);
    this.continuations.set(turnId, waiting);
    const forget = (): void => {
      const list = this.continuations.get(turnId);
      if (list?.includes(waiter)) list.splice(list.indexOf(waiter), 1);
    };
    return { done, forget };
  }

  cancel(turnId: string): void {
    this.send({ type: 'turn_cancel', session_id: this.sessionId, payload: { turn_id: turnId } });
  }

  /** Ends the session (episode written) or just leaves it, then closes the socket. */
  async close(end: boolean): Promise<void> {
    if (!this.closed && this.sessionId) {
      await this.request({ type: end ? 'session_close' : 'session_leave', session_id: this.sessionId, payload: {} }, 'session_closed', 5000).catch((err: unknown) => {
        if (!(err instanceof SessionError)) throw err;
      });
    }
    this.closed = true;
    this.socket.close(1000);
  }

  private send(message: ClientMessage): void {
    if (this.socket.readyState !== WebSocket.OPEN) throw new SessionError('CLOSED', 'the connection to the brain is closed');
    this.socket.send(JSON.stringify(message));
  }

  private request(message: ClientMessage, replyType: BrainMessage['type'], timeoutMs = 10_000): Promise<BrainMessage> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new SessionError('TIMEOUT', `no ${replyType} from the brain within ${timeoutMs} ms`)), timeoutMs);
      this.waiter = { type: replyType, resolve: (m) => (clearTimeout(timer), resolve(m)), reject: (e) => (clearTimeout(timer), reject(e)) };
      this.send(message);
    });
  }

  private receive(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return this.fail(new SessionError('BAD_FRAME', `the brain sent a frame that is not JSON: ${(err as Error).message}`));
    }
    if (!checkBrainMessage.Check(value)) return this.fail(new SessionError('BAD_FRAME', `the brain sent an unexpected frame: ${text.slice(0, 200)}`));
    const m = value;
    if (this.waiter && (m.type === this.waiter.type || (m.type === 'error' && m.payload.turn_id === undefined))) {
      const w = this.waiter;
      this.waiter = null;
      if (m.type === 'error') w.reject(new SessionError(m.payload.code, m.payload.message));
      else w.resolve(m);
    }
    if (m.type === 'turn_started' && m.payload.continues !== undefined) {
      const waiter = this.continuations.get(m.payload.continues)?.shift();
      if (waiter) this.turns.set(m.payload.turn_id, waiter);
    }
    if (m.type === 'text_response') this.settle(m.payload.turn_id, (t) => t.resolve(m.payload));
    // TURN_FAILED is followed by the turn's text_response; other turn errors (BUSY) end the turn.
    if (m.type === 'error' && m.payload.turn_id && m.payload.code !== 'TURN_FAILED') this.settle(m.payload.turn_id, (t) => t.reject(new SessionError(m.payload.code, m.payload.message)));
    for (const l of this.listeners) l(m);
  }

  private settle(turnId: string, fn: (t: PendingTurn) => void): void {
    const t = this.turns.get(turnId);
    if (!t) return;
    this.turns.delete(turnId);
    fn(t);
  }

  private fail(err: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.waiter?.reject(err);
    this.waiter = null;
    for (const t of [...this.turns.values(), ...[...this.continuations.values()].flat()]) t.reject(err);
    this.turns.clear();
    this.continuations.clear();
  }
}
