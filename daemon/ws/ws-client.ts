// One WebSocket connection on /v1/session as a session client. Two protections keep a bad peer from
// costing the brain memory or sockets:
//  - heartbeat: a ping every `heartbeatMs`; a peer that has not answered (pong or any frame) by the
//    next beat is dead and is terminated;
//  - slow consumer: when the bytes queued for a peer pass `maxBufferedBytes`, the peer is
//    disconnected (close 4008) instead of letting the queue grow without bound.
import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import type { BrainMessage } from '../../protocol/session';
import { CLOSE_CODES } from '../../protocol/session';
import type { SessionClient } from '../agent/session';

export interface WsClientOptions {
  heartbeatMs: number;
  maxBufferedBytes: number;
}

/** After a close frame, a peer that does not finish the handshake is cut off this much later. */
const CLOSE_GRACE_MS = 1000;

export type DropReason = 'slow_consumer' | 'heartbeat';

export class WsClient implements SessionClient {
  readonly id = `wsc_${randomBytes(6).toString('base64url')}`;
  readonly kind = 'websocket' as const;
  private alive = true;
  private heartbeat: NodeJS.Timeout | null = null;
  dropped: DropReason | null = null;

  constructor(
    private readonly socket: Pick<WebSocket, 'send' | 'close' | 'terminate' | 'ping' | 'readyState' | 'bufferedAmount'>,
    private readonly options: WsClientOptions,
    private readonly onDrop: (reason: DropReason) => void = () => undefined,
  ) {}

  start(): void {
    this.heartbeat = setInterval(() => this.beat(), this.options.heartbeatMs);
    this.heartbeat.unref();
  }

  stop(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  /** Any frame or pong from the peer proves it is alive. */
  seen(): void {
    this.alive = true;
  }

  send(message: BrainMessage): void {
    if (this.socket.readyState !== 1 || this.dropped) return;
    this.socket.send(JSON.stringify(message));
    if (this.socket.bufferedAmount > this.options.maxBufferedBytes) this.drop('slow_consumer');
  }

  private beat(): void {
    if (this.socket.readyState !== 1) return;
    if (!this.alive) {
      this.drop('heartbeat');
      return;
    }
    this.alive = false;
    this.socket.ping();
  }

  private drop(reason: DropReason): void {
    if (this.dropped) return;
    this.dropped = reason;
    this.stop();
    if (reason === 'heartbeat') {
      this.socket.terminate();
    } else {
      this.socket.close(CLOSE_CODES.slowConsumer, 'slow consumer: too much unread data');
      // The close frame queues behind the unread data; do not wait on the peer to read it.
      setTimeout(() => this.socket.terminate(), CLOSE_GRACE_MS).unref();
    }
    this.onDrop(reason);
  }
}
