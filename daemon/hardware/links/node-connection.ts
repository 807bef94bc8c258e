// One /v1/node socket as the hub sees it: who the key says it is, whether it registered, when it was
// last heard, its flood window and the action requests waiting for its responses. The hub
// (node-hub.ts) decides; this holds the state and writes the frames.
import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import { nodeFrame, type ActionRequest, type ActionResponse } from '../../../protocol/node';
import type { Clock } from '../../kernel/capability';
import { NodeUnreachable } from './node-links';
import type { FrameError } from './node-frames';

/** Requests one node may have waiting at once; one more is refused with NodeBusy. */
export const MAX_PENDING_PER_NODE = 64;
/** A socket sending this many times its flood limit within one window is closed (1008). */
export const FLOOD_CLOSE_FACTOR = 10;
/** At most one 1004 rate_limited per this, however many frames are dropped. */
const RATE_NOTICE_MS = 1000;
/** Error frames are skipped while this much is still unsent: a node that never reads cannot grow the brain's memory. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** A peer that does not answer our close frame is cut off after this. */
const CLOSE_GRACE_MS = 1000;

/** A request refused because the node already has MAX_PENDING_PER_NODE waiting, or the action_id is in use. */
export class NodeBusy extends Error {
  constructor(
    readonly nodeId: string,
    message: string,
  ) {
    super(`node ${nodeId}: ${message}`);
    this.name = 'NodeBusy';
  }
}

interface Pending {
  resolve(response: ActionResponse): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export type FloodVerdict = 'pass' | 'drop' | 'close';

export class NodeConnection {
  /** The node id once node_register was accepted on this socket. */
  nodeId: string | null = null;
  /** Set once the hub no longer speaks for this socket to the listener (superseded, or the brain stopping). */
  retired = false;
  /** Why we closed it, for listener.disconnected; null when the node closed first. */
  closeReason: string | null = null;
  lastSeen: number;
  readonly sessionToken = randomBytes(24).toString('base64url');
  private readonly pending = new Map<string, Pending>();
  private windowStart = Number.NEGATIVE_INFINITY;
  private windowFrames = 0;
  private lastRateNotice = Number.NEGATIVE_INFINITY;
  private deadline: NodeJS.Timeout | null = null;

  constructor(
    readonly socket: WebSocket,
    /** The node id of the key the socket authenticated with. */
    readonly principalId: string,
    private readonly clock: Clock,
    private readonly flood: { frames: number; perMs: number },
  ) {
    this.lastSeen = clock.now();
  }

  get open(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }

  send(type: string, payload: Record<string, unknown>): void {
    if (this.open) this.socket.send(nodeFrame(type, payload, this.clock.now()));
  }

  /** An `error` frame; `recoverable` false when the socket is about to close. */
  error(error: FrameError, recoverable = true): void {
    if (this.socket.bufferedAmount > MAX_BUFFERED_BYTES) return;
    this.send('error', { code: error.code, name: error.name, message: error.message, recoverable, ref_action_id: error.ref });
  }

  close(code: number, reason: string): void {
    this.clearDeadline();
    this.closeReason ??= reason;
    if (this.socket.readyState === this.socket.CLOSED) return;
    // A close reason is at most 123 bytes (RFC 6455 5.5); ours are short ASCII names.
    this.socket.close(code, reason.slice(0, 120));
    setTimeout(() => this.socket.terminate(), CLOSE_GRACE_MS).unref();
  }

  /** Closes the socket unless node_register is accepted within `ms`. */
  armDeadline(ms: number, expire: () => void): void {
    this.deadline = setTimeout(expire, ms);
    this.deadline.unref();
  }

  clearDeadline(): void {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = null;
  }

  /** Counts one inbound frame against the flood limit (a fixed window of `perMs`). */
  rate(now: number): FloodVerdict {
    if (now - this.windowStart >= this.flood.perMs || now < this.windowStart) {
      this.windowStart = now;
      this.windowFrames = 0;
    }
    this.windowFrames++;
    if (this.windowFrames <= this.flood.frames) return 'pass';
    return this.windowFrames > this.flood.frames * FLOOD_CLOSE_FACTOR ? 'close' : 'drop';
  }

  /** Whether a 1004 may be sent now (one per RATE_NOTICE_MS). */
  rateNoticeDue(now: number): boolean {
    if (now - this.lastRateNotice < RATE_NOTICE_MS && now >= this.lastRateNotice) return false;
    this.lastRateNotice = now;
    return true;
  }

  /** Sends hup_action_request and waits for the matching response, at most `waitMs`. */
  request(request: ActionRequest, waitMs: number): Promise<ActionResponse> {
    const nodeId = this.nodeId ?? this.principalId;
    if (this.pending.size >= MAX_PENDING_PER_NODE) return Promise.reject(new NodeBusy(nodeId, `${MAX_PENDING_PER_NODE} requests are already waiting for a response`));
    if (this.pending.has(request.action_id)) return Promise.reject(new NodeBusy(nodeId, `action_id ${request.action_id} is already waiting for a response`));
    return new Promise<ActionResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(request.action_id);
        reject(new NodeUnreachable(nodeId, 'timeout'));
      }, waitMs);
      timer.unref();
      this.pending.set(request.action_id, { resolve, reject, timer });
      this.send('hup_action_request', request);
    });
  }

  /** Resolves the request `actionId` with its response; false when none is waiting under that id. */
  settle(actionId: string, response: ActionResponse): boolean {
    const waiting = this.pending.get(actionId);
    if (!waiting) return false;
    this.pending.delete(actionId);
    clearTimeout(waiting.timer);
    waiting.resolve(response);
    return true;
  }

  /** Rejects every waiting request (the socket closed, was superseded, or the brain is stopping). */
  failAll(reason: 'disconnected' | 'stopping'): void {
    const nodeId = this.nodeId ?? this.principalId;
    for (const waiting of this.pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(new NodeUnreachable(nodeId, reason));
    }
    this.pending.clear();
  }
}
