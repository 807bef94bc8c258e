// The session of both ends, driven through an in-memory channel model: two brains with a replica each,
// sessions over a channel that (once the handshake is done) delivers frames late and out of order,
// duplicates them, loses batches and acks (a lost frame of any other type drops the connection, as a
// broken socket would), and drops the whole connection at random; time is a counter the test moves.
// Whatever the schedule, once the faults stop both replicas hold every op written on either side, and
// no op was ever applied twice or past a gap. The timers (keepalive, idle and handshake timeouts, the
// drain of a clean close) and the typed ends are tested one by one below.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { MAX_SYNC_FRAME_BYTES, SYNC_REFUSALS, SyncCloseCode, type SyncFrame } from '../../protocol/sync-link';
import type { SyncIdentity } from '../../sync/identity-keys';
import { decodeHelloHeader, decodeSyncFrame, encodeSyncFrame } from '../../sync/link-frames';
import { RecentNonces } from '../../sync/link-handshake';
import { SyncSession, type SessionConfig, type SessionEnd } from '../../sync/session-link';
import { BatchRefused, type SyncData } from '../../sync/session-stream';
import { directory, newIdentity, pinned, ReplicaModel } from './link-fixtures';

const CONFIG: SessionConfig = { batchBytes: 400, window: 3, keepaliveMs: 1000, idleTimeoutMs: 3000, handshakeTimeoutMs: 2000, retransmitMs: 500, drainMs: 1000 };

type Dir = 'toA' | 'toB';
type Action =
  | { kind: 'write'; side: 'a' | 'b'; count: number }
  | { kind: 'deliver'; dir: Dir; pick: number; dup: boolean }
  | { kind: 'lose'; dir: Dir; pick: number }
  | { kind: 'tick'; ms: number }
  | { kind: 'disconnect' }
  | { kind: 'close'; side: 'a' | 'b' };

interface Connection {
  readonly a: SyncSession;
  readonly b: SyncSession;
  readonly toA: string[];
  readonly toB: string[];
}

const typeOf = (text: string): string => {
  const d = decodeSyncFrame(text);
  return d.ok ? d.frame.type : 'invalid';
};

/** Two brains, their replicas and at most one connection between them. */
class World {
  clock = 0;
  readonly idA: SyncIdentity = newIdentity();
  readonly idB: SyncIdentity = newIdentity();
  readonly a = new ReplicaModel(this.idA.brainId);
  readonly b = new ReplicaModel(this.idB.brainId);
  readonly nonces = new RecentNonces();
  readonly ends: SessionEnd[] = [];
  conn: Connection | null = null;
  written = 0;

  connect(): Connection {
    const toA: string[] = [];
    const toB: string[] = [];
    const common = { now: () => this.clock, config: CONFIG, onEnd: (e: SessionEnd) => this.ends.push(e) };
    const a = new SyncSession({ ...common, identity: this.idA, end: { role: 'initiator', peer: pinned(this.idB) }, data: this.a, send: (t) => toB.push(t) });
    const b = new SyncSession({ ...common, identity: this.idB, end: { role: 'responder', peers: directory(pinned(this.idA)), nonces: this.nonces }, data: this.b, send: (t) => toA.push(t) });
    this.conn = { a, b, toA, toB };
    a.open();
    return this.conn;
  }

  /** Faults only once both ends are past the handshake (a socket never reorders; the model tests the session). */
  get faulty(): boolean {
    return this.conn !== null && this.conn.a.current !== 'handshake' && this.conn.b.current !== 'handshake';
  }

  async settle(): Promise<void> {
    if (this.conn !== null) await Promise.all([this.conn.a.settled(), this.conn.b.settled()]);
  }

  /** When an end has ended: its last frames (bye, refuse) reach the peer in order, then the socket closes. */
  async reap(): Promise<void> {
    const c = this.conn;
    if (c === null || (c.a.current !== 'ended' && c.b.current !== 'ended')) return;
    for (const [from, to, queue] of [[c.a, c.b, c.toB], [c.b, c.a, c.toA]] as const) {
      if (from.current === 'ended') while (queue.length > 0) to.receive(queue.shift()!);
    }
    c.a.transportClosed();
    c.b.transportClosed();
    await this.settle();
    this.conn = null;
  }

  async step(action: Action): Promise<void> {
    if (action.kind === 'write') {
      (action.side === 'a' ? this.a : this.b).write(action.count);
      this.written += action.count;
      this.conn?.[action.side].notify();
    } else if (action.kind === 'tick') {
      this.clock += action.ms;
      this.conn?.a.tick();
      this.conn?.b.tick();
    } else {
      const c = this.conn ?? this.connect();
      if (action.kind === 'disconnect') {
        c.a.transportClosed('dropped by the test');
        c.b.transportClosed('dropped by the test');
      } else if (action.kind === 'close') c[action.side].close();
      else this.move(c, action);
    }
    await this.settle();
    await this.reap();
  }

  private move(c: Connection, action: Extract<Action, { dir: Dir }>): void {
    const queue = c[action.dir];
    if (queue.length === 0) return;
    const faulty = this.faulty;
    const i = faulty ? action.pick % queue.length : 0;
    const text = queue[i]!;
    const to = action.dir === 'toA' ? c.a : c.b;
    if (action.kind === 'lose') {
      queue.splice(i, 1);
      if (!faulty || !['batch', 'ack'].includes(typeOf(text))) {
        c.a.transportClosed('a frame was lost');
        c.b.transportClosed('a frame was lost');
      }
      return;
    }
    if (!(faulty && action.dup)) queue.splice(i, 1);
    to.receive(text);
  }

  /** Both replicas with some ops, and a connection past its handshake: the faults start at once. */
  async start(a: number, b: number): Promise<void> {
    this.a.write(a);
    this.b.write(b);
    this.written = a + b;
    const c = this.connect();
    while (!this.faulty) await this.step({ kind: 'deliver', dir: c.toB.length > 0 ? 'toB' : 'toA', pick: 0, dup: false });
  }

  /** No faults from here: deliver in order and let time pass until both replicas hold the same ops. */
  async heal(): Promise<void> {
    for (let round = 0; round < 5000; round++) {
      const c = this.conn ?? this.connect();
      if (c.toB.length > 0) await this.step({ kind: 'deliver', dir: 'toB', pick: 0, dup: false });
      else if (c.toA.length > 0) await this.step({ kind: 'deliver', dir: 'toA', pick: 0, dup: false });
      else if (c.a.current === 'syncing' && c.b.current === 'syncing' && this.a.contents().join() === this.b.contents().join() && this.a.contents().length === this.written) return;
      else await this.step({ kind: 'tick', ms: CONFIG.retransmitMs });
    }
    assert.fail(`no convergence: a has ${this.a.contents().length}, b has ${this.b.contents().length} of ${this.written}`);
  }
}

const dir = fc.constantFrom<Dir>('toA', 'toB');
const actions = fc.array(
  fc.oneof(
    { weight: 30, arbitrary: fc.record({ kind: fc.constant('write' as const), side: fc.constantFrom('a' as const, 'b' as const), count: fc.integer({ min: 1, max: 12 }) }) },
    { weight: 100, arbitrary: fc.record({ kind: fc.constant('deliver' as const), dir, pick: fc.nat(20), dup: fc.boolean() }) },
    { weight: 15, arbitrary: fc.record({ kind: fc.constant('lose' as const), dir, pick: fc.nat(20) }) },
    { weight: 20, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 1200 }) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('disconnect' as const) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('close' as const), side: fc.constantFrom('a' as const, 'b' as const) }) },
  ),
  { minLength: 10, maxLength: 150 },
);

void test('property: through duplicates, late and lost frames and dropped connections, both replicas end with every op, none applied twice or past a gap', async () => {
  await fc.assert(
    fc.asyncProperty(actions, async (schedule) => {
      const world = new World();
      await world.start(30, 20);
      for (const action of schedule) await world.step(action);
      await world.heal();
      assert.deepEqual(world.a.contents(), world.b.contents());
      assert.equal(world.a.contents().length, world.written);
      assert.deepEqual([...world.a.duplicates, ...world.b.duplicates], [], 'an op applied twice');
      assert.deepEqual([...world.a.gaps, ...world.b.gaps], [], 'an op applied past a gap');
      const reasons = new Set(world.ends.map((e) => e.reason));
      for (const r of reasons) assert.ok(['normal', 'io', 'timeout'].includes(r), `a session ended ${r}: ${JSON.stringify(world.ends.find((e) => e.reason === r)?.refusal)}`);
    }),
    { numRuns: 150 },
  );
});

void test('a dropped connection resumes from the cursor the receiver made durable: nothing sent again that was applied', async () => {
  const world = new World();
  world.a.write(40);
  world.written = 40;
  const c = world.connect();
  // Deliver until b has applied some but not all of a's ops, then drop the link.
  while (world.b.contents().length < 10) await world.step({ kind: 'deliver', dir: c.toB.length > 0 ? 'toB' : 'toA', pick: 0, dup: false });
  assert.ok(world.b.contents().length < 40);
  const appliedBefore = world.b.contents().length;
  await world.step({ kind: 'disconnect' });
  const resumed = world.connect();
  const batches: SyncFrame[] = [];
  const deliver = async (): Promise<void> => {
    while (resumed.toB.length + resumed.toA.length > 0) {
      const next = resumed.toB[0];
      if (next !== undefined) {
        const d = decodeSyncFrame(next);
        if (d.ok && d.frame.type === 'batch') batches.push(d.frame);
      }
      await world.step({ kind: 'deliver', dir: resumed.toB.length > 0 ? 'toB' : 'toA', pick: 0, dup: false });
    }
  };
  await deliver();
  assert.equal(world.b.contents().length, 40);
  const first = batches[0];
  assert.ok(first?.type === 'batch');
  assert.deepEqual(first.ops[0], world.a.log.get(world.idA.brainId)![appliedBefore], 'the resumed session starts right after the last op b applied');
  assert.deepEqual(world.b.duplicates, []);
});

/** One session whose peer is driven by hand. */
function lone(data: SyncData, overrides: Partial<SessionConfig> = {}) {
  let clock = 0;
  const self = newIdentity();
  const peer = newIdentity();
  const sent: SyncFrame[] = [];
  const ends: SessionEnd[] = [];
  const session = new SyncSession({
    identity: self,
    end: { role: 'responder', peers: directory(pinned(peer)), nonces: new RecentNonces() },
    data,
    send: (t) => {
      const d = decodeSyncFrame(t);
      assert.ok(d.ok, t);
      sent.push(d.frame);
    },
    now: () => clock,
    config: { ...CONFIG, ...overrides },
    onEnd: (e) => ends.push(e),
  });
  // The peer's half of the handshake, through a real initiator session.
  const initiator = new SyncSession({
    identity: peer,
    end: { role: 'initiator', peer: pinned(self) },
    data: new ReplicaModel(peer.brainId),
    // Only its handshake frames: the session's own peer frames are the test's to feed.
    send: (t) => {
      const d = decodeSyncFrame(t);
      if (d.ok && (d.frame.type === 'hello' || d.frame.type === 'proof')) session.receive(t);
    },
    now: () => clock,
    config: CONFIG,
    onEnd: () => undefined,
  });
  return {
    session,
    sent,
    ends,
    peer,
    advance: (ms: number) => {
      clock += ms;
      session.tick();
    },
    /** Completes the handshake (the initiator hears the challenge and the welcome). */
    establish: async () => {
      initiator.open();
      for (let i = 0; i < 3; i++) {
        for (const f of sent.splice(0)) initiator.receive(encodeSyncFrame(f));
      }
      await session.settled();
      assert.equal(session.current, 'syncing');
    },
    feed: async (frame: SyncFrame) => {
      session.receive(encodeSyncFrame(frame));
      await session.settled();
    },
  };
}

void test('keepalive: a ping after a quiet spell, answered pongs keep the link; silence ends it with timeout', async () => {
  const l = lone(new ReplicaModel('00000000-0000-4000-8000-000000000000'));
  await l.establish();
  l.sent.length = 0;
  l.advance(CONFIG.keepaliveMs);
  assert.deepEqual(l.sent.map((f) => f.type), ['ping']);
  await l.feed({ type: 'ping', n: 7 });
  assert.deepEqual(l.sent.at(-1), { type: 'pong', n: 7 });
  l.advance(CONFIG.idleTimeoutMs - 1);
  assert.equal(l.session.current, 'syncing');
  l.advance(1);
  assert.equal(l.session.current, 'ended');
  assert.equal(l.ends[0]?.reason, 'timeout');
  assert.equal(l.ends[0]?.close, SyncCloseCode.timeout);
});

void test('a handshake that does not end in time is a timeout, and frames before it are refused as unexpected', async () => {
  const slow = lone(new ReplicaModel('00000000-0000-4000-8000-000000000000'));
  slow.advance(CONFIG.handshakeTimeoutMs);
  assert.equal(slow.ends[0]?.reason, 'timeout');
  const early = lone(new ReplicaModel('00000000-0000-4000-8000-000000000000'));
  await early.feed({ type: 'batch', seq: 1, cursor: {}, ops: [] });
  assert.equal(early.ends[0]?.reason, 'protocol');
  assert.equal(early.ends[0]?.refusal?.code, 'unexpected');
  assert.deepEqual(early.sent.at(-1)?.type, 'refuse');
});

void test('bad input after the handshake (not JSON, an oversized frame, an unknown type) ends the link with its reason and close code', async () => {
  for (const [input, reason, close] of [
    ['{"type":', 'protocol', SyncCloseCode.protocol],
    ['x'.repeat(MAX_SYNC_FRAME_BYTES + 1), 'too_large', SyncCloseCode.too_large],
    ['{"type":"gossip"}', 'protocol', SyncCloseCode.protocol],
    ['{"type":"hello","v":1}', 'protocol', SyncCloseCode.protocol],
  ] as const) {
    const l = lone(new ReplicaModel('00000000-0000-4000-8000-000000000000'));
    await l.establish();
    l.session.receive(input);
    assert.equal(l.ends[0]?.reason, reason, input.slice(0, 40));
    assert.equal(l.ends[0]?.close, close);
  }
});

void test('a batch the data layer refuses ends the link with its reason: ops from the future are clock_skew', async () => {
  const data: SyncData = {
    cursor: () => Promise.resolve({}),
    ops: async function* () {},
    apply: () => Promise.reject(new BatchRefused('clock_skew', 'an op 2 hours ahead')),
  };
  const l = lone(data);
  await l.establish();
  await l.feed({ type: 'batch', seq: 1, cursor: {}, ops: [{ any: 1 }] });
  assert.equal(l.ends[0]?.reason, 'clock_skew');
  assert.equal(l.ends[0]?.close, SyncCloseCode.clock_skew);
  for (const [code, reason] of [['forged', 'auth'], ['malformed', 'protocol']] as const) {
    const refusing = lone({ ...data, apply: () => Promise.reject(new BatchRefused(code, 'op 3')) });
    await refusing.establish();
    await refusing.feed({ type: 'batch', seq: 1, cursor: {}, ops: [] });
    assert.equal(refusing.ends[0]?.reason, reason);
    assert.deepEqual(refusing.sent.at(-1), { type: 'refuse', code, message: 'batch 1 refused: op 3' });
  }
  const failing = lone({ ...data, apply: () => Promise.reject(new Error('disk full')) });
  await failing.establish();
  await failing.feed({ type: 'batch', seq: 1, cursor: {}, ops: [] });
  assert.equal(failing.ends[0]?.reason, 'io');
  assert.match(String(failing.ends[0]?.refusal?.message), /disk full/);
  assert.ok(failing.ends[0]?.cause instanceof Error, 'the error itself goes to the host for its log');
});

void test('an op too big for any frame ends the link too_large', async () => {
  const data: SyncData = {
    cursor: () => Promise.resolve({}),
    ops: async function* () {
      yield [{ body: 'x'.repeat(MAX_SYNC_FRAME_BYTES) }];
    },
    apply: () => Promise.resolve({}),
  };
  const l = lone(data);
  await l.establish();
  await l.feed({ type: 'cursor', cursor: {}, window: 2 });
  assert.equal(l.ends[0]?.reason, 'too_large');
});

void test('a clean close waits for the batches in flight to be acknowledged, then says bye; without acks it gives up after drainMs', async () => {
  const replica = new ReplicaModel('00000000-0000-4000-8000-000000000000');
  replica.write(3);
  const l = lone(replica);
  await l.establish();
  await l.feed({ type: 'cursor', cursor: {}, window: 4 });
  const batch = l.sent.find((f) => f.type === 'batch');
  assert.ok(batch?.type === 'batch');
  l.session.close();
  assert.equal(l.session.current, 'closing');
  await l.feed({ type: 'ack', seq: batch.seq, cursor: replica.now() });
  assert.equal(l.session.current, 'ended');
  assert.deepEqual(l.sent.at(-1), { type: 'bye' });
  assert.deepEqual(l.ends[0], { reason: 'normal', refusal: null, close: SyncCloseCode.normal, peer: l.peer.brainId });

  const stuck = lone(replica);
  await stuck.establish();
  await stuck.feed({ type: 'cursor', cursor: {}, window: 4 });
  stuck.session.close();
  stuck.advance(CONFIG.drainMs - 1);
  assert.equal(stuck.session.current, 'closing');
  stuck.advance(1);
  assert.equal(stuck.ends[0]?.reason, 'normal');
});

void test('backpressure: the sender keeps within the smaller window and sends more only as acks arrive', async () => {
  const replica = new ReplicaModel('00000000-0000-4000-8000-000000000000');
  replica.write(60);
  const l = lone(replica);
  await l.establish();
  await l.feed({ type: 'cursor', cursor: {}, window: 2 });
  const batches = (): Extract<SyncFrame, { type: 'batch' }>[] => l.sent.filter((f): f is Extract<SyncFrame, { type: 'batch' }> => f.type === 'batch');
  assert.deepEqual(batches().map((b) => b.seq), [1, 2]);
  await l.feed({ type: 'ack', seq: 1, cursor: {} });
  assert.deepEqual(batches().map((b) => b.seq), [1, 2, 3]);
  await l.feed({ type: 'ack', seq: 1, cursor: {} }); // a duplicate ack frees nothing
  assert.deepEqual(batches().map((b) => b.seq), [1, 2, 3]);
  for (const b of batches()) assert.ok(Buffer.byteLength(encodeSyncFrame(b)) <= CONFIG.batchBytes, 'batches stay within batchBytes');
  await l.feed({ type: 'ack', seq: 9, cursor: {} });
  assert.equal(l.ends[0]?.refusal?.code, 'unexpected', 'an ack of a batch never sent');
});

void test('a brain that is not paired is refused auth with close 4001 at both ends, and a wrong version protocol with 4003', () => {
  for (const [peers, reason, close] of [
    [directory(), 'auth', SyncCloseCode.unauthorized],
    [null, 'protocol', SyncCloseCode.version],
  ] as const) {
    const a = newIdentity();
    const b = newIdentity();
    const ends: Record<string, SessionEnd> = {};
    const data = new ReplicaModel(a.brainId);
    let toB: SyncSession | null = null;
    const initiator = new SyncSession({ identity: a, end: { role: 'initiator', peer: pinned(b) }, data, send: (t) => toB?.receive(peers === null ? t.replace('"v":1', '"v":2') : t), now: () => 0, onEnd: (e) => (ends.a = e) });
    const responder = new SyncSession({ identity: b, end: { role: 'responder', peers: peers ?? directory(pinned(a)), nonces: new RecentNonces() }, data, send: (t) => initiator.receive(t), now: () => 0, onEnd: (e) => (ends.b = e) });
    toB = responder;
    initiator.open();
    assert.deepEqual([ends.a?.reason, ends.a?.close, ends.b?.reason, ends.b?.close], [reason, close, reason, close]);
  }
});

void test('over a real WebSocket on loopback: two brains exchange everything, then close cleanly with 1000', async (t) => {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  t.after(() => server.close());
  await once(server, 'listening');
  const idA = newIdentity();
  const idB = newIdentity();
  const a = new ReplicaModel(idA.brainId);
  const b = new ReplicaModel(idB.brainId);
  a.write(300, 200);
  b.write(200, 200);
  const closes: number[] = [];
  const ends: SessionEnd[] = [];
  let converged: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (converged = resolve));
  const check = (): void => {
    if (a.contents().length === 500 && b.contents().length === 500) converged();
  };
  server.on('connection', (socket) => {
    const session = new SyncSession({
      identity: idB,
      end: { role: 'responder', peers: directory(pinned(idA)), nonces: new RecentNonces() },
      data: b,
      send: (text) => socket.send(text),
      now: Date.now,
      onApplied: check,
      onEnd: (e) => {
        ends.push(e);
        socket.close(e.close);
      },
    });
    socket.on('message', (data, isBinary) => session.receive(data, isBinary));
    socket.on('close', () => session.transportClosed());
  });
  const socket = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/sync`);
  const initiator = new SyncSession({
    identity: idA,
    end: { role: 'initiator', peer: pinned(idB) },
    data: a,
    send: (text) => socket.send(text),
    now: Date.now,
    config: { batchBytes: 8 * 1024, window: 2 },
    onApplied: check,
    onEnd: (e) => {
      ends.push(e);
      socket.close(e.close);
    },
  });
  socket.on('message', (data, isBinary) => initiator.receive(data, isBinary));
  socket.on('close', (code) => {
    closes.push(code);
    initiator.transportClosed();
  });
  await once(socket, 'open');
  initiator.open();
  await done;
  assert.deepEqual(a.contents(), b.contents());
  initiator.close();
  await once(socket, 'close');
  assert.deepEqual(ends.map((e) => e.reason), ['normal', 'normal']);
  assert.deepEqual(closes, [SyncCloseCode.normal]);
  assert.deepEqual([...a.duplicates, ...b.duplicates, ...a.gaps, ...b.gaps], []);
});

void test('the hello in the upgrade header: a paired brain is challenged before any frame, an unknown one refused with 401', () => {
  for (const paired of [true, false]) {
    const a = newIdentity();
    const b = newIdentity();
    const data = new ReplicaModel(b.brainId);
    const toA: string[] = [];
    const ends: SessionEnd[] = [];
    const initiator = new SyncSession({ identity: a, end: { role: 'initiator', peer: pinned(b) }, data, send: () => assert.fail('the hello went in the header'), now: () => 0, onEnd: () => undefined });
    const header = decodeHelloHeader(initiator.helloHeader());
    initiator.open();
    assert.ok(header.ok);
    const responder = new SyncSession({ identity: b, end: { role: 'responder', peers: paired ? directory(pinned(a)) : directory(), nonces: new RecentNonces() }, data, send: (t) => toA.push(t), now: () => 0, onEnd: (e) => ends.push(e) });
    responder.receive(header.text);
    const first = decodeSyncFrame(toA[0] ?? '');
    if (paired) assert.equal(first.ok && first.frame.type, 'challenge');
    else assert.equal(ends[0] && SYNC_REFUSALS[ends[0].refusal!.code].http, 401);
  }
});
