// The brain's /sync links (docs/sync.md "The link"): the sessions of sync/session-link.ts on real
// WebSockets, both ends. It answers peers that dial in (the upgrade request's hello is judged before
// the upgrade, so an unknown or forgotten brain gets its HTTP status), dials the peers it has a URL for
// with backoff and jitter, keeps one session per peer, ticks every session's timers, tells the sessions
// when this brain wrote ops, and keeps the metrics.
//
// One session per peer: when a second session with a peer is established, both brains keep the same
// one — of two sessions dialled the same way the newer; of two dialled from both ends at once, the one
// the brain with the lower id dialled — and close the other cleanly. A session's first read of this
// brain's cursor waits until every earlier session with that peer has settled, so an apply still
// under way is not missing from the cursor it reports (its ops would be sent again).
import type { Logger } from 'pino';
import WebSocket from 'ws';
import type { IncomingMessage } from 'node:http';
import { MAX_SYNC_FRAME_BYTES, SYNC_HELLO_HEADER, SYNC_REFUSALS, SyncCloseCode, type Cursor, type SyncFailureReason, type SyncRefusalCode } from '../../protocol/sync-link';
import type { SyncFailureInfo, SyncPeerView } from '../../protocol/sync-api';
import type { SyncIdentity } from '../../sync/identity-keys';
import { decodeHelloHeader, type RawSyncFrame } from '../../sync/link-frames';
import { RecentNonces } from '../../sync/link-handshake';
import { ReconnectPolicy } from '../../sync/link-backoff';
import { SyncSession, type SessionConfig, type SessionEnd } from '../../sync/session-link';
import type { SyncData } from '../../sync/session-stream';
import type { SyncMetrics } from './sync-metrics';
import type { PeerCursors } from './peer-cursors';
import { peerView, type PeerRecord, type SyncPeers } from './sync-peers';

/** How often sessions' timers run and due dials start. */
export const TICK_MS = 1000;
/** A time that never comes (setTimeout's bound), for the session's retransmission on a reliable transport. */
const NEVER_MS = 2 ** 31 - 1;
/** How long stop() waits for sessions to say bye before it cuts the sockets. */
const STOP_WAIT_MS = 2000;
/** The most of an HTTP refusal's body the dialler reads. */
const REFUSAL_BODY_MAX = 8192;

export type Direction = 'outbound' | 'inbound';

/** Where a peer can be dialled, and how that was learnt. */
export interface PeerAddress {
  readonly url: string;
  readonly source: 'paired' | 'static' | 'mdns';
}

export interface SyncLinksDeps {
  readonly identity: SyncIdentity;
  readonly peers: SyncPeers;
  readonly data: SyncData;
  readonly now: () => number;
  readonly logger: Logger;
  readonly metrics: SyncMetrics;
  /** Where to dial a peer now (static settings, mDNS, its pairing), or null. */
  readonly address: (peer: PeerRecord) => PeerAddress | null;
  /** Where what each peer is known to hold is kept (tombstone collection, `behind` while apart). */
  readonly cursors?: PeerCursors;
  readonly config?: Partial<SessionConfig>;
  readonly random?: () => number;
}

interface Link {
  readonly session: SyncSession;
  readonly direction: Direction;
  socket: WebSocket | null;
  /** The peer: known from the start when dialled, after the handshake when answered. */
  peer: string | null;
  established: boolean;
  /** Frames a responder wrote before its socket was upgraded (the challenge to a header hello). */
  buffered: string[] | null;
  /** What ended it, when the transport knows better than the session (an HTTP refusal, an oversized frame). */
  override: SyncFailureInfo | null;
  /** Closed on purpose (forgotten, superseded, stopping): not a failure. */
  quiet: boolean;
  /** How its session ended. */
  end: SessionEnd | null;
}

interface PeerState {
  readonly links: Set<Link>;
  readonly policy: ReconnectPolicy;
  /** Sessions that ended and may still be applying. */
  readonly ending: Set<SyncSession>;
  nextAttemptAt: number;
  lastFailure: SyncFailureInfo | null;
}

/** An upgrade request judged before the upgrade: a session to hand the socket, or the HTTP refusal. */
export type UpgradeVerdict = { readonly ok: true; readonly accept: (socket: WebSocket) => void } | { readonly ok: false; readonly status: number; readonly code: SyncRefusalCode; readonly message: string };

export class SyncLinks {
  private readonly state = new Map<string, PeerState>();
  /** Links not yet tied to a peer: answered, in their handshake. */
  private readonly anonymous = new Set<Link>();
  private readonly nonces = new RecentNonces();
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  /** Peers are answered only once the op log is up to date (start()). */
  private started = false;
  private readonly log: Logger;

  constructor(private readonly deps: SyncLinksDeps) {
    this.log = deps.logger;
  }

  start(): void {
    this.started = true;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
    this.tick();
  }

  /** A peer brain dials in: judges the hello of the upgrade request, if it carries one. */
  upgrade(helloHeader: string | undefined, remote: string): UpgradeVerdict {
    if (this.stopping) return { ok: false, status: 503, code: 'io', message: 'this brain is stopping' };
    if (!this.started) return { ok: false, status: 503, code: 'io', message: 'this brain is still bringing its op log up to date' };
    const link = this.newLink('inbound', null);
    if (helloHeader !== undefined) {
      const decoded = decodeHelloHeader(helloHeader);
      if (!decoded.ok) {
        this.countRefusal(decoded.refusal.code, decoded.refusal.message, remote);
        return { ok: false, status: SYNC_REFUSALS[decoded.refusal.code].http, code: decoded.refusal.code, message: decoded.refusal.message };
      }
      link.session.receive(decoded.text);
      const refused = link.end?.refusal;
      if (link.session.current === 'ended') {
        const code = refused?.code ?? 'unexpected';
        return { ok: false, status: SYNC_REFUSALS[code].http, code, message: refused?.message ?? 'the hello was refused' };
      }
    }
    return {
      ok: true,
      accept: (socket) => {
        this.anonymous.add(link);
        this.attach(link, socket);
        if (helloHeader === undefined) link.session.open();
      },
    };
  }

  /** This brain wrote ops (or applied a peer's): every established session sends them when its window allows. */
  notify(): void {
    for (const s of this.state.values()) for (const link of s.links) if (link.established) link.session.notify();
  }

  /** Closes every link with a forgotten peer at once; it is not dialled again. */
  forgotten(brainId: string): void {
    const s = this.state.get(brainId);
    if (s === undefined) return;
    for (const link of s.links) this.cut(link, SyncCloseCode.unauthorized, 'forgotten');
  }

  /** Dials a peer at once (the CLI's `sync now`), resetting its wait. */
  dialNow(brainId: string): void {
    const peer = this.deps.peers.get(brainId);
    if (peer === undefined || peer.forgottenAt !== null) return;
    const s = this.peerState(brainId);
    s.nextAttemptAt = 0;
    if (s.links.size === 0) this.dial(peer);
  }

  /** The established session with a peer, if any. */
  connected(brainId: string): { direction: Direction; session: SyncSession } | null {
    for (const link of this.state.get(brainId)?.links ?? []) if (link.established) return { direction: link.direction, session: link.session };
    return null;
  }

  lastFailure(brainId: string): SyncFailureInfo | null {
    return this.state.get(brainId)?.lastFailure ?? null;
  }

  /** Peers with an established session now. */
  activePeers(): number {
    let n = 0;
    for (const s of this.state.values()) for (const link of s.links) if (link.established) {
      n++;
      break;
    }
    return n;
  }

  /** What `svc sync peers` shows of one peer (`behind` is counted by the caller from the cursors). */
  view(peer: PeerRecord, behind: (cursor: Cursor | null) => number): SyncPeerView {
    const s = this.state.get(peer.brainId);
    const open = this.connected(peer.brainId);
    const cursor = open?.session.progress()?.peerHas ?? this.deps.cursors?.get(peer.brainId) ?? null;
    const live = {
      connected: open?.direction ?? null,
      dialling: [...(s?.links ?? [])].some((l) => !l.established),
      nextAttemptAt: s?.nextAttemptAt ?? null,
      lastFailure: s?.lastFailure ?? null,
    };
    return peerView(peer, this.deps.address(peer), cursor, behind(cursor), live, this.deps.now());
  }

  /** Says bye on every session, waits a little for the peers to answer, then cuts what is left. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    const links = [...this.allLinks()];
    const closed = links.map((l) => (l.socket === null || l.socket.readyState === WebSocket.CLOSED ? Promise.resolve() : new Promise<void>((resolve) => l.socket!.once('close', () => resolve()))));
    for (const link of links) {
      link.quiet = true;
      link.session.close();
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closed), new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
    clearTimeout(timer);
    for (const link of this.allLinks()) {
      link.socket?.terminate();
      link.session.transportClosed('stopping');
    }
    await Promise.all(links.map((l) => l.session.settled()));
  }

  // ── Timers and dialling ────────────────────────────────────────────────────────────────────────

  private tick(): void {
    const now = this.deps.now();
    for (const link of [...this.allLinks()]) {
      link.session.tick();
      if (link.established) this.saveCursor(link);
    }
    if (!this.stopping) {
      for (const peer of this.deps.peers.active()) {
        const s = this.peerState(peer.brainId);
        if (s.links.size === 0 && now >= s.nextAttemptAt) this.dial(peer);
      }
    }
    this.deps.metrics.observe(this.activePeers(), now);
  }

  private dial(peer: PeerRecord): void {
    const address = this.deps.address(peer);
    if (address === null || this.stopping) return;
    const link = this.newLink('outbound', peer.brainId);
    this.peerState(peer.brainId).links.add(link);
    let socket: WebSocket;
    try {
      socket = new WebSocket(address.url, { headers: { [SYNC_HELLO_HEADER]: link.session.helloHeader() }, maxPayload: MAX_SYNC_FRAME_BYTES, handshakeTimeout: 10_000, perMessageDeflate: false });
    } catch (err) {
      // A URL ws will not dial (settings are checked, so only a name it cannot parse).
      link.override = { reason: 'io', code: 'io', message: `cannot dial ${address.url}: ${err instanceof Error ? err.message : String(err)}`, at: this.deps.now() };
      link.session.transportClosed(link.override.message);
      return;
    }
    socket.on('unexpected-response', (request, response) => {
      this.readRefusal(response, (info) => {
        link.override = info;
        request.destroy();
        link.session.transportClosed(info.message);
      });
    });
    socket.once('open', () => link.session.open());
    this.attach(link, socket);
  }

  /** The refusal an HTTP answer to the upgrade carries (the error envelope's details.refusal), else one from its status. */
  private readRefusal(response: IncomingMessage, done: (info: SyncFailureInfo) => void): void {
    const status = response.statusCode ?? 0;
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= REFUSAL_BODY_MAX) chunks.push(chunk);
    });
    const finish = (): void => {
      const code = refusalCodeOf(Buffer.concat(chunks).toString('utf8')) ?? codeForStatus(status);
      done({ reason: SYNC_REFUSALS[code].reason, code, message: `the peer answered the upgrade with HTTP ${status} (${code})`, at: this.deps.now() });
    };
    response.once('end', finish);
    response.once('error', finish);
  }

  // ── Links ──────────────────────────────────────────────────────────────────────────────────────

  private newLink(direction: Direction, peer: string | null): Link {
    const pinned = peer === null ? undefined : this.deps.peers.peer(peer);
    const link: Link = { session: undefined as unknown as SyncSession, direction, socket: null, peer, established: false, buffered: direction === 'inbound' ? [] : null, override: null, quiet: false, end: null };
    const session = new SyncSession({
      identity: this.deps.identity,
      end: pinned === undefined ? { role: 'responder', peers: this.deps.peers, nonces: this.nonces } : { role: 'initiator', peer: pinned },
      data: this.gated(link),
      send: (text) => {
        if (link.buffered !== null) link.buffered.push(text);
        else if (link.socket?.readyState === WebSocket.OPEN) link.socket.send(text);
      },
      now: this.deps.now,
      // A WebSocket loses no frame: a batch is never sent again on the same connection (a slow
      // receiver is still alive while its pings come; a dead one ends by the idle timeout).
      config: { retransmitMs: NEVER_MS, ...this.deps.config },
      onEstablished: (p) => this.established(link, p.brainId),
      onApplied: () => {
        // What one peer sent goes on to the others (a chain a–b–c relays through b).
        this.notify();
        if (link.peer !== null) void this.deps.peers.synced(link.peer, this.deps.now()).catch((err: unknown) => this.log.error({ err, peer: link.peer }, 'recording the last sync failed'));
      },
      onEnd: (end) => this.ended(link, end),
    });
    (link as { session: SyncSession }).session = session;
    return link;
  }

  private attach(link: Link, socket: WebSocket): void {
    link.socket = socket;
    const buffered = link.buffered ?? [];
    link.buffered = null;
    for (const text of buffered) socket.send(text);
    socket.on('message', (data: RawSyncFrame, isBinary: boolean) => link.session.receive(data, isBinary));
    socket.on('close', (code: number) => {
      // ws closes with 1009 itself when a frame is over maxPayload.
      if (code === SyncCloseCode.too_large && link.override === null) link.override = { reason: 'too_large', code: 'too_large', message: 'a frame over 1 MiB', at: this.deps.now() };
      link.session.transportClosed(`the socket closed (${code})`);
    });
    socket.on('error', (err: Error) => {
      if (link.override === null && err.message.includes('Max payload size exceeded')) link.override = { reason: 'too_large', code: 'too_large', message: err.message, at: this.deps.now() };
      this.log.debug({ err: err.message, peer: link.peer, direction: link.direction }, 'sync socket error');
    });
  }

  /** The data a session draws on: its first cursor waits for the peer's earlier sessions to settle. */
  private gated(link: Link): SyncData {
    const { data } = this.deps;
    return {
      cursor: async () => {
        const earlier = link.peer === null ? [] : [...(this.state.get(link.peer)?.ending ?? [])].filter((s) => s !== link.session);
        await Promise.all(earlier.map((s) => s.settled()));
        return data.cursor();
      },
      ops: (since, maxBytes) => data.ops(since, maxBytes),
      apply: (ops, peer) => data.apply(ops, peer),
    };
  }

  private established(link: Link, peer: string): void {
    const now = this.deps.now();
    link.peer = peer;
    link.established = true;
    this.anonymous.delete(link);
    const s = this.peerState(peer);
    s.links.add(link);
    s.policy.linkUp(now);
    for (const other of s.links) {
      if (other === link || !other.established) continue;
      const keep = other.direction === link.direction ? link : (this.deps.identity.brainId < peer) === (link.direction === 'outbound') ? link : other;
      const drop = keep === link ? other : link;
      drop.quiet = true;
      this.log.info({ peer, kept: keep.direction, closed: drop.direction }, 'two sync sessions with one peer: closing one');
      drop.session.close();
    }
    this.log.info({ peer, direction: link.direction }, 'sync session established');
    void this.deps.peers.synced(peer, now).catch((err: unknown) => this.log.error({ err, peer }, 'recording the last sync failed'));
    this.deps.metrics.observe(this.activePeers(), now);
  }

  private ended(link: Link, end: SessionEnd): void {
    const now = this.deps.now();
    link.end = end;
    if (link.established) this.saveCursor(link);
    this.anonymous.delete(link);
    const peer = link.peer ?? end.peer;
    const s = peer === null ? undefined : this.state.get(peer);
    s?.links.delete(link);
    if (s !== undefined) {
      s.ending.add(link.session);
      void link.session.settled().then(() => s.ending.delete(link.session));
    }
    const failure: SyncFailureInfo | null =
      link.override ?? (end.reason === 'normal' || link.quiet ? null : { reason: end.reason, code: end.refusal?.code ?? 'io', message: end.refusal?.message ?? end.reason, at: now });
    if (failure !== null && !link.quiet) {
      this.deps.metrics.failure(failure.reason);
      if (s !== undefined) s.lastFailure = failure;
      this.log.warn({ peer, direction: link.direction, reason: failure.reason, code: failure.code, message: failure.message }, 'sync link failed');
      if (end.cause !== undefined) this.log.error({ err: end.cause, peer }, 'sync data layer error');
    } else this.log.info({ peer, direction: link.direction }, 'sync session closed');
    if (link.socket !== null && link.socket.readyState === WebSocket.OPEN) link.socket.close(end.close, (failure?.code ?? 'bye').slice(0, 100));
    else if (link.socket !== null && link.socket.readyState === WebSocket.CONNECTING) link.socket.terminate();
    // Dial again after the backoff (a session that stayed up a minute starts the count again).
    if (s !== undefined && s.links.size === 0 && !link.quiet) s.nextAttemptAt = now + s.policy.linkDown(now);
    this.deps.metrics.observe(this.activePeers(), now);
  }

  /** Keeps what the peer of an established link is known to hold. */
  private saveCursor(link: Link): void {
    const has = link.session.progress()?.peerHas;
    if (this.deps.cursors === undefined || link.peer === null || has === null || has === undefined) return;
    void this.deps.cursors.record(link.peer, has, this.deps.now()).catch((err: unknown) => this.log.error({ err, peer: link.peer }, 'saving a peer cursor failed'));
  }

  /** Ends a link on purpose: no failure counted. */
  private cut(link: Link, code: number, why: string): void {
    link.quiet = true;
    if (link.socket !== null && link.socket.readyState === WebSocket.OPEN) link.socket.close(code, why);
    link.session.transportClosed(why);
  }

  private countRefusal(code: SyncRefusalCode, message: string, remote: string): void {
    this.deps.metrics.failure(SYNC_REFUSALS[code].reason);
    this.log.warn({ remote, code, message }, 'sync upgrade refused');
  }

  private peerState(brainId: string): PeerState {
    let s = this.state.get(brainId);
    if (s === undefined) {
      s = { links: new Set(), policy: new ReconnectPolicy(this.deps.random ?? Math.random), ending: new Set(), nextAttemptAt: 0, lastFailure: null };
      this.state.set(brainId, s);
    }
    return s;
  }

  private *allLinks(): Iterable<Link> {
    yield* this.anonymous;
    for (const s of this.state.values()) yield* s.links;
  }
}

/** The refusal code an error envelope names in `error.details.refusal`, if any. */
function refusalCodeOf(body: string): SyncRefusalCode | null {
  try {
    const code = (JSON.parse(body) as { error?: { details?: { refusal?: unknown } } }).error?.details?.refusal;
    return typeof code === 'string' && Object.hasOwn(SYNC_REFUSALS, code) ? (code as SyncRefusalCode) : null;
  } catch (err) {
    if (err instanceof SyntaxError) return null;
    throw err;
  }
}

/** A refusal for an HTTP answer that names none (a brain with sync off answers 404, a proxy 502). */
function codeForStatus(status: number): SyncRefusalCode {
  if (status === 401 || status === 403) return 'unknown_peer';
  if (status === 408) return 'timeout';
  if (status === 413) return 'too_large';
  if (status >= 400 && status < 500) return 'unexpected';
  return 'io';
}

export type { SyncFailureReason };
