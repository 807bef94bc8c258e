// One /sync connection, either end (docs/sync.md "The link"), free of any transport: the host hands it
// each frame it receives and a `send` for the frames it writes, calls `tick()` now and then (every
// second is plenty) and closes the socket with the close code of the end it reports.
//
//   handshake ──established──▶ syncing ──close()──▶ closing ──drained or drainMs──▶ ended (normal)
//       │                         │                    │
//       └── refusal, timeout, a refuse or bye from the peer, the transport gone ──▶ ended (reason)
//
// In `syncing` a ping goes out after keepaliveMs without sending anything and the peer answers pong;
// nothing received for idleTimeoutMs ends the link `timeout`. Every end carries one of the bounded
// failure reasons of protocol/sync-link.ts for the metrics, or `normal`.
import { SYNC_LINK_DEFAULTS, SYNC_REFUSALS, SyncCloseCode, type Cursor, type SyncFailureReason, type SyncFrame } from '../protocol/sync-link';
import type { SyncIdentity } from './identity-keys';
import type { PinnedPeer } from './identity-pairing';
import { decodeSyncFrame, encodeHelloHeader, encodeSyncFrame, refusal, type RawSyncFrame, type SyncRefusal } from './link-frames';
import { InitiatorHandshake, ResponderHandshake, type HandshakeStep, type NonceLedger, type PeerDirectory } from './link-handshake';
import { SessionStream, type SyncData } from './session-stream';

export type SessionConfig = { readonly [K in keyof typeof SYNC_LINK_DEFAULTS]: number };

/** How a session ended. */
export interface SessionEnd {
  readonly reason: 'normal' | SyncFailureReason;
  /** Why, when it was not a clean close. */
  readonly refusal: SyncRefusal | null;
  /** The close code for the socket. */
  readonly close: number;
  /** The peer, once the handshake named one. */
  readonly peer: string | null;
  /** An unexpected error of the data layer, for the host's log. */
  readonly cause?: unknown;
}

export type SessionRole = { readonly role: 'initiator'; readonly peer: PinnedPeer } | { readonly role: 'responder'; readonly peers: PeerDirectory; readonly nonces: NonceLedger };

export interface SessionOptions {
  readonly identity: SyncIdentity;
  readonly end: SessionRole;
  readonly data: SyncData;
  /** Writes one encoded frame to the transport. */
  readonly send: (text: string) => void;
  readonly now: () => number;
  readonly config?: Partial<SessionConfig>;
  readonly nonce?: () => string;
  readonly onEstablished?: (peer: PinnedPeer) => void;
  readonly onApplied?: (ops: number) => void;
  readonly onEnd: (end: SessionEnd) => void;
}

export type SessionState = 'handshake' | 'syncing' | 'closing' | 'ended';

export class SyncSession {
  private state: SessionState = 'handshake';
  private readonly config: SessionConfig;
  private readonly handshake: InitiatorHandshake | ResponderHandshake;
  private stream: SessionStream | null = null;
  private peer: PinnedPeer | null = null;
  private readonly openedAt: number;
  private lastSent: number;
  private lastReceived: number;
  private closingSince = 0;
  private pings = 0;
  private helloSent = false;

  constructor(private readonly o: SessionOptions) {
    this.config = { ...SYNC_LINK_DEFAULTS, ...o.config };
    this.handshake = o.end.role === 'initiator' ? new InitiatorHandshake(o.identity, o.end.peer, o.nonce) : new ResponderHandshake(o.identity, o.end.peers, o.end.nonces, o.nonce);
    this.openedAt = this.lastSent = this.lastReceived = o.now();
  }

  get current(): SessionState {
    return this.state;
  }

  /** Starts the link: the initiator sends its hello (unless the upgrade request carried it); the responder waits for one. */
  open(): void {
    if (this.handshake instanceof InitiatorHandshake && !this.helloSent) this.write(this.handshake.hello());
  }

  /** The initiator's hello for the upgrade request (SYNC_HELLO_HEADER), so a refusal is an HTTP status; open() then sends none. */
  helloHeader(): string {
    if (!(this.handshake instanceof InitiatorHandshake)) throw new Error('only the initiator of a sync link says hello');
    this.helloSent = true;
    return encodeHelloHeader(this.handshake.hello());
  }

  /** One frame from the transport. */
  receive(data: RawSyncFrame, isBinary = false): void {
    if (this.state === 'ended') return;
    this.lastReceived = this.o.now();
    const decoded = decodeSyncFrame(data, isBinary);
    if (!decoded.ok) return this.fail(decoded.refusal, true);
    this.dispatch(decoded.frame);
  }

  /** Timers: handshake deadline, keepalive, idle timeout, retransmission, the end of a drain. */
  tick(): void {
    const now = this.o.now();
    if (this.state === 'ended') return;
    if (this.state === 'handshake') {
      if (now - this.openedAt >= this.config.handshakeTimeoutMs) this.fail(refusal('timeout', `no handshake within ${this.config.handshakeTimeoutMs} ms`), true);
      return;
    }
    if (now - this.lastReceived >= this.config.idleTimeoutMs) return this.fail(refusal('timeout', `nothing from the peer for ${this.config.idleTimeoutMs} ms`), false);
    if (this.state === 'closing' && (this.stream!.drained || now - this.closingSince >= this.config.drainMs)) return this.bye();
    this.stream!.tick();
    if (now - this.lastSent >= this.config.keepaliveMs) this.write({ type: 'ping', n: ++this.pings });
  }

  /** Where the exchange stands, once the session is syncing: see SessionStream's quiet and peerHas. */
  progress(): { readonly quiet: boolean; readonly peerHas: Cursor | null; readonly sent: number; readonly received: number } | null {
    const s = this.stream;
    return s === null ? null : { quiet: s.quiet, peerHas: s.peerHas, sent: s.counts.sent, received: s.counts.received };
  }

  /** The peer, once the handshake proved it. */
  get peerId(): string | null {
    return this.peer?.brainId ?? null;
  }

  /** This brain wrote ops: send them when the window allows. */
  notify(): void {
    this.stream?.notify();
  }

  /** A clean close: no new batches, the ones in flight acknowledged (or drainMs passed), then bye. */
  close(): void {
    if (this.state === 'handshake') return this.end({ reason: 'normal', refusal: null, close: SyncCloseCode.normal, peer: null });
    if (this.state !== 'syncing') return;
    this.state = 'closing';
    this.closingSince = this.o.now();
    this.stream!.stopSending();
    if (this.stream!.drained) this.bye();
  }

  /** The transport closed or failed under the session. */
  transportClosed(message = 'the connection closed'): void {
    if (this.state !== 'ended') this.end(this.failure(refusal('io', message)));
  }

  /**
   * Resolves when no pull or apply is under way. The host starts the next session with a peer only
   * after the last one ended and settled: an apply still running would otherwise be missing from the
   * cursor the new session reports, and its ops would be sent again.
   */
  async settled(): Promise<void> {
    await this.stream?.settled();
  }

  private dispatch(frame: SyncFrame): void {
    if (this.state === 'handshake') return this.step(this.handshake.receive(frame));
    switch (frame.type) {
      case 'cursor':
      case 'batch':
        return this.stream!.receive(frame);
      case 'ack':
        this.stream!.receive(frame);
        if (this.state === 'closing' && this.stream!.drained) this.bye();
        return;
      case 'ping':
        return this.write({ type: 'pong', n: frame.n });
      case 'pong':
        return;
      case 'bye':
        return this.end({ reason: 'normal', refusal: null, close: SyncCloseCode.normal, peer: this.peer?.brainId ?? null });
      case 'refuse':
        return this.fail(refusal(frame.code, `the peer ended the link: ${frame.message ?? frame.code}`), false);
      default:
        return this.fail(refusal('unexpected', `a ${frame.type} frame after the handshake`), true);
    }
  }

  private step(step: HandshakeStep): void {
    if (step.send !== null) this.write(step.send);
    if (step.kind === 'refused') return this.end(this.failure(step.refusal));
    if (step.kind === 'continue') return;
    this.peer = step.peer;
    this.state = 'syncing';
    const stream = new SessionStream(step.peer.brainId, this.o.data, this.config, {
      send: (text) => this.writeText(text),
      fail: (r, cause) => this.fail(r, true, cause),
      now: this.o.now,
      applied: (ops) => this.o.onApplied?.(ops),
    });
    this.stream = stream;
    this.o.onEstablished?.(step.peer);
    stream.start();
  }

  private bye(): void {
    this.write({ type: 'bye' });
    this.end({ reason: 'normal', refusal: null, close: SyncCloseCode.normal, peer: this.peer?.brainId ?? null });
  }

  /** Ends the link for `r`; `tell` sends the peer a refuse frame first. */
  private fail(r: SyncRefusal, tell: boolean, cause?: unknown): void {
    if (this.state === 'ended') return;
    if (tell) this.write({ type: 'refuse', code: r.code, message: r.message.slice(0, 500) });
    this.end(this.failure(r, cause));
  }

  private failure(r: SyncRefusal, cause?: unknown): SessionEnd {
    const info = SYNC_REFUSALS[r.code];
    return { reason: info.reason, refusal: r, close: info.close, peer: this.peer?.brainId ?? null, ...(cause === undefined ? {} : { cause }) };
  }

  private end(end: SessionEnd): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.stream?.stop();
    this.o.onEnd(end);
  }

  private write(frame: SyncFrame): void {
    this.writeText(encodeSyncFrame(frame));
  }

  private writeText(text: string): void {
    if (this.state === 'ended') return;
    this.lastSent = this.o.now();
    this.o.send(text);
  }
}
