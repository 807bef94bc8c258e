// A peer brain played by a test against a built brain's /sync (docs/sync.md "The link"): a real Ed25519
// identity paired through POST /api/sync/pair/accept, its own ops stamped as a brain stamps them
// (sync/ops.ts, sync/hlc.ts), a WebSocket to /sync driven frame by frame (the handshake of
// sync/link-handshake.ts, then any frame, good or bad), and a whole good session (the SyncSession of
// sync/session-link.ts as the initiator) that carries one note to the brain.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { WebSocket, type RawData } from 'ws';
import type { SyncOp } from '../../protocol/sync';
import type { SyncStatus } from '../../protocol/sync-api';
import { SYNC_HELLO_HEADER, SyncCloseCode, type Cursor, type SyncFrame, type SyncFrames } from '../../protocol/sync-link';
import { HybridClock } from '../../sync/hlc';
import { generateKeypair, identityOf, type SyncIdentity } from '../../sync/identity-keys';
import { pairRequest, type PinnedPeer } from '../../sync/identity-pairing';
import { decodeSyncFrame, encodeHelloHeader } from '../../sync/link-frames';
import { InitiatorHandshake } from '../../sync/link-handshake';
import { stampOp } from '../../sync/ops';
import { SyncSession, type SessionEnd } from '../../sync/session-link';
import type { SyncData } from '../../sync/session-stream';
import type { BrainProcess } from './brain-process';
import { until } from './poll';

/** How long a frame, a close or a synced note may take to arrive. */
export const WAIT_MS = 10_000;

// ── The peer brain the test plays ──────────────────────────────────────────────────────────────────

/** A paired peer: its identity, the brain's key as it pinned it, and its own ops the brain has applied (seq i+1 at index i). */
export interface Peer {
  readonly identity: SyncIdentity;
  readonly brain: PinnedPeer;
  readonly clock: HybridClock;
  readonly log: SyncOp[];
}

export const newIdentity = (): SyncIdentity => identityOf(randomUUID(), generateKeypair());

export async function json<T>(brain: BrainProcess, path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const r = await brain.api(path, init);
  return { status: r.status, body: (await r.json()) as T };
}

/** Mints a brain pairing token on `brain` and completes pairing from `identity` (no URL: the brain never dials it). */
export async function pairPeer(brain: BrainProcess, identity: SyncIdentity, name: string): Promise<Peer> {
  const minted = await json<{ token: string }>(brain, '/api/devices/pair', { method: 'POST', body: JSON.stringify({ kind: 'brain', name }) });
  assert.equal(minted.status, 201);
  const r = await fetch(`${brain.url}/api/sync/pair/accept`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pairRequest(identity, minted.body.token, name)) });
  const answer = (await r.json()) as { brain_id: string; public_key: string };
  assert.equal(r.status, 201, JSON.stringify(answer));
  return { identity, brain: { brainId: answer.brain_id, publicKey: answer.public_key, revoked: false }, clock: new HybridClock(identity.brainId, Date.now), log: [] };
}

export const cursorOf = (peer: Peer): Cursor => ({ [peer.identity.brainId]: peer.log.length });

/** A new note of the peer, numbered `seq` (by default the next after what the brain has) and stamped `hlc` (by default now). */
export function noteOp(peer: Peer, text: string, seq = peer.log.length + 1, hlc = peer.clock.now()): SyncOp {
  const body = { text, source: 'user', tags: [], created_at: Date.now() };
  return stampOp({ kind: 'note.put', record_id: `note_${randomBytes(8).toString('hex')}`, base: null, body }, peer.identity.brainId, seq, hlc);
}

/** The peer's side of the data for a good session: its own log; what the brain sends it is counted, not kept. */
export function peerData(peer: Peer): SyncData {
  const held: Cursor = {};
  return {
    cursor: () => Promise.resolve({ ...held, ...cursorOf(peer) }),
    ops: async function* (since) {
      const missing = peer.log.slice(since[peer.identity.brainId] ?? 0);
      if (missing.length > 0) yield missing;
    },
    apply: (ops) => {
      for (const op of ops as SyncOp[]) held[op.origin] = Math.max(held[op.origin] ?? 0, op.seq);
      return Promise.resolve({ ...held, ...cursorOf(peer) });
    },
  };
}

// ── A /sync link driven by hand ────────────────────────────────────────────────────────────────────

const bufferOf = (data: RawData): Buffer => (Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data));

export interface Closed {
  readonly code: number;
  readonly reason: string;
}

/** An upgrade refused before the WebSocket opened: the HTTP status and the refusal its envelope names. */
export interface HttpRefusal {
  readonly status: number;
  readonly refusal: unknown;
}

/** One WebSocket to the brain's /sync: frames the brain sent, decoded and checked, taken in order of type. */
export class RawLink {
  private readonly frames: SyncFrame[] = [];
  /** What the brain sent that is not a frame: `next` fails with it. */
  private readonly invalid: string[] = [];
  /** Transport errors, for the message when a frame never comes. */
  private readonly errors: string[] = [];
  private wake: () => void = () => undefined;
  private ended = false;
  readonly closed: Promise<Closed>;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data: RawData, isBinary: boolean) => {
      const decoded = decodeSyncFrame(bufferOf(data), isBinary);
      if (decoded.ok) this.frames.push(decoded.frame);
      else this.invalid.push(decoded.refusal.message);
      this.wake();
    });
    this.closed = new Promise((resolve) =>
      socket.once('close', (code: number, reason: Buffer) => {
        this.ended = true;
        this.wake();
        resolve({ code, reason: reason.toString('utf8') });
      }),
    );
    // Writing into a socket the brain has just closed (after an oversized frame) may fail: the close
    // code says what happened, and the error is kept for the message of a frame that never came.
    socket.on('error', (err) => this.errors.push(err.message));
  }

  /** Dials /sync, with `hello` in the upgrade request when given. */
  static open(brain: BrainProcess, hello?: string): Promise<RawLink | HttpRefusal> {
    const socket = new WebSocket(`ws://127.0.0.1:${brain.port}/sync`, { headers: hello === undefined ? {} : { [SYNC_HELLO_HEADER]: hello }, perMessageDeflate: false });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new RawLink(socket)));
      socket.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        response.once('end', () => {
          const parsed = JSON.parse(body) as { error?: { details?: { refusal?: unknown } } };
          resolve({ status: response.statusCode ?? 0, refusal: parsed.error?.details?.refusal });
          socket.terminate();
        });
      });
      socket.once('error', reject);
    });
  }

  /** Any value as a JSON text frame (a bad frame as readily as a good one). */
  send(frame: unknown): void {
    this.socket.send(JSON.stringify(frame));
  }

  sendRaw(data: string | Buffer, binary = false): void {
    this.socket.send(data, { binary });
  }

  /** The next frame of `type` the brain sent (frames of other types stay for their own `next`). */
  async next<K extends keyof SyncFrames>(type: K, waitMs = WAIT_MS): Promise<SyncFrames[K]> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      assert.deepEqual(this.invalid, [], 'the brain sent only valid frames');
      const i = this.frames.findIndex((f) => f.type === type);
      if (i >= 0) return this.frames.splice(i, 1)[0] as SyncFrames[K];
      const seen = `got ${this.frames.map((f) => f.type).join(', ') || 'nothing'}${this.errors.length > 0 ? `; socket errors: ${this.errors.join('; ')}` : ''}`;
      if (this.ended) throw new Error(`the link closed without a ${type} frame (${seen})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${type} frame within ${waitMs} ms (${seen})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  close(): void {
    this.socket.close();
  }
}

export const isLink = (x: RawLink | HttpRefusal): x is RawLink => x instanceof RawLink;

export async function openLink(brain: BrainProcess, hello?: string): Promise<RawLink> {
  const opened = await RawLink.open(brain, hello);
  assert.ok(isLink(opened), `the upgrade was refused: ${JSON.stringify(opened)}`);
  return opened;
}

/** Dials with the hello in the upgrade request and answers the challenge; `proof` may tamper with the proof sent. */
export async function handshake(brain: BrainProcess, peer: Peer, options: { nonce?: string; proof?: (sig: string, challenge: SyncFrames['challenge']) => string } = {}): Promise<RawLink> {
  const initiator = new InitiatorHandshake(peer.identity, peer.brain, options.nonce === undefined ? undefined : () => options.nonce!);
  return prove(await openLink(brain, encodeHelloHeader(initiator.hello())), initiator, options.proof);
}

/** Answers the brain's challenge on a link whose hello `initiator` said; `proof` may tamper with the proof sent. */
export async function prove(link: RawLink, initiator: InitiatorHandshake, proof?: (sig: string, challenge: SyncFrames['challenge']) => string): Promise<RawLink> {
  const challenge = await link.next('challenge');
  const step = initiator.receive(challenge);
  assert.equal(step.kind, 'continue', 'the brain\'s challenge verifies');
  assert.ok(step.send?.type === 'proof');
  link.send({ type: 'proof', sig: proof?.(step.send.sig, challenge) ?? step.send.sig });
  if (proof === undefined) await link.next('welcome');
  return link;
}

/**
 * Waits until the brain answers /sync (it does so only once its op log is up to date, a 503 before):
 * a good handshake, closed with bye, which counts no failure.
 */
export async function whenSyncAnswers(brain: BrainProcess, peer: Peer): Promise<void> {
  const initiator = new InitiatorHandshake(peer.identity, peer.brain);
  const hello = encodeHelloHeader(initiator.hello());
  const link = await until(
    () => 'the brain to answer /sync',
    async () => {
      const opened = await RawLink.open(brain, hello);
      if (isLink(opened)) return opened;
      assert.equal(opened.status, 503, JSON.stringify(opened));
      return undefined;
    },
    WAIT_MS,
  );
  await prove(link, initiator);
  link.send({ type: 'bye' });
  assert.equal((await link.closed).code, SyncCloseCode.normal);
}

// ── What the brain shows ───────────────────────────────────────────────────────────────────────────

export const noteTexts = async (brain: BrainProcess): Promise<string[]> =>
  (await json<{ items: { text: string }[] }>(brain, '/api/memory/notes?limit=100')).body.items.map((n) => n.text).sort();

export const brainCursor = async (brain: BrainProcess): Promise<Cursor> => (await json<SyncStatus>(brain, '/api/sync/status')).body.cursor;

/**
 * A fresh, good session (the whole SyncSession as the initiator) carries one new note of `peer` to the
 * brain, which shows it, and ends cleanly.
 */
export async function syncOneNote(brain: BrainProcess, peer: Peer, text: string, op = noteOp(peer, text)): Promise<void> {
  assert.equal(op.seq, peer.log.length + 1);
  peer.log.push(op);
  let socket: WebSocket | null = null;
  let endedWith: SessionEnd | null = null;
  let ended: (end: SessionEnd) => void = () => undefined;
  const end = new Promise<SessionEnd>((resolve) => (ended = resolve));
  const session = new SyncSession({
    identity: peer.identity,
    end: { role: 'initiator', peer: peer.brain },
    data: peerData(peer),
    send: (frame) => socket?.send(frame),
    now: Date.now,
    onEnd: (e) => {
      endedWith = e;
      ended(e);
      if (socket?.readyState === WebSocket.OPEN) socket.close(e.close);
    },
  });
  const ws = new WebSocket(`ws://127.0.0.1:${brain.port}/sync`, { headers: { [SYNC_HELLO_HEADER]: session.helloHeader() }, perMessageDeflate: false });
  socket = ws;
  const closed = new Promise<number>((resolve) => ws.once('close', (code: number) => resolve(code)));
  ws.on('message', (data: RawData, isBinary: boolean) => session.receive(bufferOf(data), isBinary));
  ws.once('close', () => session.transportClosed());
  ws.on('error', (err) => session.transportClosed(err.message));
  await until(
    () => `the note "${text}" on the brain`,
    async () => {
      if (endedWith !== null) throw new Error(`the good session ended before the note arrived: ${JSON.stringify(endedWith)}`);
      return (await noteTexts(brain)).includes(text) && session.progress()?.quiet === true ? true : undefined;
    },
    WAIT_MS,
  );
  assert.equal((await brainCursor(brain))[peer.identity.brainId], peer.log.length, 'the brain holds every op of the peer');
  session.close();
  assert.equal((await end).reason, 'normal');
  assert.equal(await closed, SyncCloseCode.normal);
}

