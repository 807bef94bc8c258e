// The session after the handshake (docs/sync.md "The link"): both ends are sender and receiver at
// once. Each first sends its cursor (what it has) and its receive window; then each streams the ops the
// other lacks as numbered batches, at most `window` unacknowledged, and applies the other's batches in
// order, acknowledging each with its new cursor.
//
// - No gap: a batch is applied only when every lower one was (later ones wait, within the window).
// - No duplicate apply: a batch number at or below the last applied is answered with the last ack again
//   and never applied twice; a new pull of ops starts only when nothing is in flight, from what the
//   peer is known to have: its cursor, the cursors its acks carried and the cursors its own batches
//   carried (so the peer's ops are never echoed back to it), merged by taking the larger count. A new
//   connection starts from the cursor the receiver reports, which is what its applies made durable
//   (the host starts it only after the previous session with that peer settled).
// - Backpressure: the sender pulls the next batch from `ops` only while its window has room.
// - Frames are bounded: a batch whose encoding is over `batchBytes` is split by bytes, an op too big
//   for any frame fails the session `too_large`.
import { MAX_SYNC_FRAME_BYTES, type Cursor, type SyncFrame, type SyncFrames } from '../protocol/sync-link';
import { encodeSyncFrame, refusal, type SyncRefusal } from './link-frames';

/** This brain's side of the data (the merge core's op log behind it). Ops are opaque here. */
export interface SyncData {
  /** What this brain has now, durably. */
  cursor(): Promise<Cursor>;
  /**
   * Batches of ops that the holder of `since` lacks, in an order it can apply, each about `maxBytes`
   * encoded at most, read from the log as it is when the reading begins (an op applied later is not
   * part of it: it may have come from the very peer this is for).
   */
  ops(since: Cursor, maxBytes: number): AsyncIterable<unknown[]>;
  /** Applies a batch from `peer` durably; resolves with this brain's cursor after it. Rejects with BatchRefused to refuse it. */
  apply(ops: unknown[], peer: string): Promise<Cursor>;
}

/**
 * A batch the data layer refuses (the merge core's refusals: sync/replica.ts): ops from the future
 * beyond the bounded skew, malformed or forged ops. The session ends with that code; the refused op is
 * not applied, so the next session sends it again.
 */
export class BatchRefused extends Error {
  constructor(
    readonly code: 'clock_skew' | 'malformed' | 'forged' | 'too_large',
    message: string,
  ) {
    super(message);
  }
}

export interface StreamConfig {
  readonly batchBytes: number;
  readonly window: number;
  readonly retransmitMs: number;
}

export interface StreamHooks {
  readonly send: (text: string) => void;
  /** The stream cannot go on; the session ends with this refusal. `cause` is an unexpected error of the data layer. */
  readonly fail: (refusal: SyncRefusal, cause?: unknown) => void;
  readonly now: () => number;
  /** A batch of the peer was applied (metrics: the link synced). */
  readonly applied?: (ops: number, cursor: Cursor) => void;
}

/** What a batch frame costs beyond its ops and cursor: `{"type":"batch","seq":<16 digits>,"cursor":,"ops":[]}`. */
const BATCH_OVERHEAD = 64;

/** The larger count of each origin: both cursors are what one brain is known to hold, and holdings only grow. */
export function mergeCursors(a: Cursor, b: Cursor): Cursor {
  const out: Cursor = { ...a };
  for (const [origin, n] of Object.entries(b)) {
    const had = out[origin];
    if (had === undefined || n > had) out[origin] = n;
  }
  return out;
}

/**
 * `ops` split into runs whose encoded batch frames stay within `maxBytes` (an op over it travels
 * alone), or the index of an op that does not fit any frame.
 */
export function splitByBytes(ops: readonly unknown[], maxBytes: number, overhead = BATCH_OVERHEAD, frameBytes = MAX_SYNC_FRAME_BYTES): { batches: unknown[][] } | { tooLarge: number } {
  const batches: unknown[][] = [];
  let current: unknown[] = [];
  let size = overhead;
  for (const [i, op] of ops.entries()) {
    const bytes = Buffer.byteLength(JSON.stringify(op) ?? 'null') + 1;
    if (bytes + overhead > frameBytes) return { tooLarge: i };
    if (current.length > 0 && size + bytes > maxBytes) {
      batches.push(current);
      current = [];
      size = overhead;
    }
    current.push(op);
    size += bytes;
  }
  if (current.length > 0) batches.push(current);
  return { batches };
}

interface InFlight {
  readonly text: string;
  sentAt: number;
}

export class SessionStream {
  // Sender.
  /** What the peer is known to have; null until its cursor frame arrives. */
  private peerCursor: Cursor | null = null;
  /** Cursors the peer's batches carried before its cursor frame (a reordering transport). */
  private learned: Cursor = {};
  /** This brain's cursor when the current pull began: every batch of the pull carries it. */
  private pullCursor: Cursor = {};
  private peerWindow = 1;
  private nextSeq = 1;
  private ackedSeq = 0;
  private readonly inflight = new Map<number, InFlight>();
  private readonly ready: unknown[][] = [];
  private source: AsyncIterator<unknown[]> | null = null;
  private pulling = false;
  private dirty = true;
  private sending = true;
  // Receiver.
  private applied = 0;
  private applying = false;
  private readonly pending = new Map<number, unknown[]>();
  private lastAck: SyncFrames['ack'] | null = null;
  // Both.
  private stopped = false;
  private readonly work = new Set<Promise<void>>();

  constructor(
    private readonly peer: string,
    private readonly data: SyncData,
    private readonly config: StreamConfig,
    private readonly hooks: StreamHooks,
  ) {}

  /** Sends this end's cursor and window: the first session frame. */
  start(): void {
    this.track(this.data.cursor().then((cursor) => this.emit({ type: 'cursor', cursor, window: this.config.window })));
  }

  /** A session frame from the peer (cursor, batch, ack). */
  receive(frame: Extract<SyncFrame, { type: 'cursor' | 'batch' | 'ack' }>): void {
    if (this.stopped) return;
    if (frame.type === 'cursor') this.onCursor(frame);
    else if (frame.type === 'batch') this.onBatch(frame);
    else this.onAck(frame);
  }

  /** This brain has new ops: pull again once the current pull and the batches in flight are done. */
  notify(): void {
    this.dirty = true;
    this.pump();
  }

  /** Sends again every batch unacknowledged for `retransmitMs`. */
  tick(): void {
    if (this.stopped) return;
    const now = this.hooks.now();
    for (const entry of this.inflight.values()) {
      if (now - entry.sentAt < this.config.retransmitMs) continue;
      entry.sentAt = now;
      this.hooks.send(entry.text);
    }
  }

  /** No new batches from here (a clean close drains the ones in flight). */
  stopSending(): void {
    this.sending = false;
  }

  /** Ops sent (each batch once, retransmissions not counted) and applied from the peer in this session. */
  readonly counts = { sent: 0, received: 0 };

  /** What the peer is known to have (its cursor frame and its acks); null before its cursor frame. */
  get peerHas(): Cursor | null {
    return this.peerCursor === null ? null : { ...this.peerCursor };
  }

  /** Nothing to send or being read, nothing unacknowledged, nothing received waiting to be applied. */
  get quiet(): boolean {
    return this.peerCursor !== null && !this.dirty && !this.pulling && this.source === null && this.ready.length === 0 && this.inflight.size === 0 && !this.applying && this.pending.size === 0;
  }

  /** Nothing of ours unacknowledged. */
  get drained(): boolean {
    return this.inflight.size === 0;
  }

  /** Everything stops: no frame is sent and no batch applied after this. */
  stop(): void {
    this.stopped = true;
  }

  /** Resolves when no pull or apply is under way (tests drive the ends until both are quiet). */
  async settled(): Promise<void> {
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
  }

  // ── Sender ────────────────────────────────────────────────────────────────────────────────────
  private onCursor(frame: SyncFrames['cursor']): void {
    // A second cursor (a duplicate from a faulty transport) is older news than the acks: ignored.
    if (this.peerCursor !== null) return;
    this.peerCursor = mergeCursors(frame.cursor, this.learned);
    this.peerWindow = Math.min(frame.window, this.config.window);
    this.pump();
  }

  private onAck(frame: SyncFrames['ack']): void {
    if (frame.seq >= this.nextSeq) return this.fail(refusal('unexpected', `an ack of batch ${frame.seq}, which was never sent`));
    if (frame.seq <= this.ackedSeq) return; // late or duplicate: a later ack said more
    for (const seq of this.inflight.keys()) if (seq <= frame.seq) this.inflight.delete(seq);
    this.ackedSeq = frame.seq;
    this.learn(frame.cursor);
    this.pump();
  }

  private learn(cursor: Cursor): void {
    if (this.peerCursor === null) this.learned = mergeCursors(this.learned, cursor);
    else this.peerCursor = mergeCursors(this.peerCursor, cursor);
  }

  private pump(): void {
    if (this.stopped || !this.sending || this.peerCursor === null) return;
    while (this.ready.length > 0 && this.inflight.size < this.peerWindow) this.sendBatch(this.ready.shift()!);
    if (this.pulling || this.inflight.size >= this.peerWindow || this.ready.length > 0) return;
    if (this.source === null) return this.startPull();
    const source = this.source;
    this.pulling = true;
    this.track(
      source.next().then((r) => {
        this.pulling = false;
        if (r.done === true) this.source = null;
        else this.enqueue(r.value);
        this.pump();
      }),
    );
  }

  /** A new pull starts from what the peer is known to have, so only when nothing is in flight. */
  private startPull(): void {
    if (!this.dirty || this.inflight.size > 0) return;
    this.dirty = false;
    this.pulling = true;
    this.track(
      this.data.cursor().then((own) => {
        this.pulling = false;
        if (this.stopped || this.peerCursor === null) return;
        this.pullCursor = own;
        this.source = this.data.ops({ ...this.peerCursor }, this.config.batchBytes)[Symbol.asyncIterator]();
        this.pump();
      }),
    );
  }

  private enqueue(ops: unknown[]): void {
    if (ops.length === 0) return;
    const split = splitByBytes(ops, this.config.batchBytes, BATCH_OVERHEAD + Buffer.byteLength(JSON.stringify(this.pullCursor)));
    if ('tooLarge' in split) return this.fail(refusal('too_large', `op ${split.tooLarge} of a batch does not fit a ${MAX_SYNC_FRAME_BYTES}-byte frame`));
    this.ready.push(...split.batches);
  }

  private sendBatch(ops: unknown[]): void {
    const seq = this.nextSeq++;
    const text = encodeSyncFrame({ type: 'batch', seq, cursor: this.pullCursor, ops });
    this.inflight.set(seq, { text, sentAt: this.hooks.now() });
    this.counts.sent += ops.length;
    this.hooks.send(text);
  }

  // ── Receiver ──────────────────────────────────────────────────────────────────────────────────
  private onBatch(frame: SyncFrames['batch']): void {
    this.learn(frame.cursor);
    if (frame.seq <= this.applied) {
      // Already applied (a duplicate, or a retransmission whose ack was lost): acknowledge again.
      if (this.lastAck !== null) this.emit(this.lastAck);
      return;
    }
    if (frame.seq > this.applied + this.config.window) return this.fail(refusal('unexpected', `batch ${frame.seq} is beyond the window (applied ${this.applied}, window ${this.config.window})`));
    if (frame.seq === this.applied + 1 && this.applying) return; // a duplicate of the batch being applied
    if (!this.pending.has(frame.seq)) this.pending.set(frame.seq, frame.ops);
    this.drain();
  }

  private drain(): void {
    if (this.stopped || this.applying) return;
    const seq = this.applied + 1;
    const ops = this.pending.get(seq);
    if (ops === undefined) return;
    this.pending.delete(seq);
    this.applying = true;
    this.track(
      this.data.apply(ops, this.peer).then(
        (cursor) => {
          this.applying = false;
          this.applied = seq;
          this.lastAck = { type: 'ack', seq, cursor };
          this.counts.received += ops.length;
          this.hooks.applied?.(ops.length, cursor);
          this.emit(this.lastAck);
          this.drain();
        },
        (err: unknown) => {
          this.applying = false;
          if (err instanceof BatchRefused) this.fail(refusal(err.code, `batch ${seq} refused: ${err.message}`));
          else this.fail(refusal('io', `applying batch ${seq} failed: ${err instanceof Error ? err.message : String(err)}`), err);
        },
      ),
    );
  }

  // ── Both ──────────────────────────────────────────────────────────────────────────────────────
  private emit(frame: SyncFrame): void {
    if (!this.stopped) this.hooks.send(encodeSyncFrame(frame));
  }

  private fail(r: SyncRefusal, cause?: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.hooks.fail(r, cause);
  }

  /** Runs `p` as tracked work; a data-layer failure (cursor, ops) ends the session as `io`. */
  private track(p: Promise<void>): void {
    const done = p.then(
      () => undefined,
      (err: unknown) => this.fail(refusal('io', `reading ops failed: ${err instanceof Error ? err.message : String(err)}`), err),
    );
    this.work.add(done);
    void done.finally(() => this.work.delete(done));
  }
}
