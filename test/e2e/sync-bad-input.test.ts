// Bad input on /sync against a built brain (issue 15: malformed, replayed, oversized and forged ops are
// refused and counted; the link and the brain survive). The test plays a paired peer brain
// (test/helpers/sync-peer.ts) that dials the brain's /sync with a real WebSocket: the handshake of
// sync/link-handshake.ts, then hand-made frames. Each bad input gets the refusal of docs/sync.md
// "Refusals and failure reasons" (refuse frame code and close code, or the HTTP status before the
// upgrade), moves svc_sync_failures_total{reason} by exactly one, applies nothing, and leaves a brain
// that answers /health and syncs one op over a fresh, good session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SyncOp } from '../../protocol/sync';
import { SYNC_CONTEXT, SYNC_LINK_DEFAULTS, SYNC_LINK_VERSION, SYNC_REFUSALS, SyncCloseCode, type SyncFrames, type SyncRefusalCode } from '../../protocol/sync-link';
import { encodeHlc } from '../../sync/hlc';
import { generateKeypair, identityOf, keyFingerprint, signText } from '../../sync/identity-keys';
import { encodeHelloHeader, encodeSyncFrame } from '../../sync/link-frames';
import { InitiatorHandshake, handshakeTranscript } from '../../sync/link-handshake';
import { stampOp } from '../../sync/ops';
import { tripleId } from '../../sync/triple-id';
import { ROOT, startBrain, type BrainProcess } from '../helpers/brain-process';
import { samples } from '../helpers/metric-samples';
import { until } from '../helpers/poll';
import { RawLink, WAIT_MS, brainCursor, cursorOf, handshake, isLink, newIdentity, noteOp, noteTexts, openLink, pairPeer, syncOneNote, whenSyncAnswers, type Peer } from '../helpers/sync-peer';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The refusal table of docs/sync.md "Refusals and failure reasons": code → reason, close code, HTTP status. */
function documentedRefusals(): Record<string, { reason: string; close: number; http: number }> {
  const doc = readFileSync(join(ROOT, 'docs', 'sync.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| ([a-z_]+) \| (\d{4}) \| (\d{3}) \|/gm)];
  return Object.fromEntries(rows.map((m) => [m[1]!, { reason: m[2]!, close: Number(m[3]), http: Number(m[4]) }]));
}

// ── Refused, counted once, nothing applied, still serving ──────────────────────────────────────────

/** The link is refused with `code`: its refuse frame, then the close code docs/sync.md gives it. */
async function assertRefused(link: RawLink, code: SyncRefusalCode): Promise<void> {
  const refuse = await link.next('refuse');
  assert.equal(refuse.code, code, refuse.message);
  assert.equal((await link.closed).code, SYNC_REFUSALS[code].close);
}

/** The upgrade is refused with `code` and its HTTP status, in the error envelope. */
async function assertHttpRefused(brain: BrainProcess, hello: string, code: SyncRefusalCode): Promise<void> {
  const opened = await RawLink.open(brain, hello);
  assert.ok(!isLink(opened), `the brain upgraded a link it should refuse with ${code}`);
  assert.deepEqual(opened, { status: SYNC_REFUSALS[code].http, refusal: code });
}

/** svc_sync_failures_total by reason, as /metrics shows it. */
async function failures(brain: BrainProcess): Promise<Record<string, number>> {
  const text = await (await brain.api('/metrics')).text();
  return Object.fromEntries(samples(text).filter((s) => s.name === 'svc_sync_failures_total').map((s) => [s.labels.reason!, s.value]));
}

/** `reason` went up by exactly one from `before`, and no other reason moved. */
async function assertCountedOnce(brain: BrainProcess, before: Record<string, number>, reason: string): Promise<void> {
  const expected = { ...before, [reason]: before[reason]! + 1 };
  const after = await until(
    () => `svc_sync_failures_total{reason="${reason}"} to reach ${expected[reason]}`,
    async () => {
      const now = await failures(brain);
      return now[reason]! >= expected[reason]! ? now : undefined;
    },
    WAIT_MS,
  );
  assert.deepEqual(after, expected);
}

/** The brain is whole: /health answers 200, the process runs, and a good session syncs a note without failing. */
async function assertStillServes(brain: BrainProcess, peer: Peer, text: string, op?: SyncOp): Promise<void> {
  assert.equal((await fetch(`${brain.url}/health`)).status, 200);
  assert.equal(brain.child.exitCode, null, 'the brain is running');
  const before = await failures(brain);
  await syncOneNote(brain, peer, text, op);
  assert.deepEqual(await failures(brain), before, 'a good session counts no failure');
}

/**
 * One bad input: `run` sends it and checks the refusal; then `reason` counted once, nothing of it
 * applied (the brain's notes and cursor as before), and the brain still serves: a good session syncs
 * `after` (the note and its text), or a new note.
 */
async function refusedOnce(brain: BrainProcess, peer: Peer, reason: string, run: () => Promise<void>, after?: { op: SyncOp; text: string }): Promise<void> {
  const before = await failures(brain);
  const notes = await noteTexts(brain);
  const cursor = await brainCursor(brain);
  await run();
  await assertCountedOnce(brain, before, reason);
  assert.deepEqual(await noteTexts(brain), notes, 'nothing applied');
  assert.deepEqual(await brainCursor(brain), cursor, 'no op of the refused input in the brain\'s cursor');
  await assertStillServes(brain, peer, after?.text ?? `still syncing after ${reason} ${randomUUID()}`, after?.op);
}

/** A batch frame numbered `seq` carrying `ops`, sent after the handshake and the peer's cursor. */
async function sendBatch(brain: BrainProcess, peer: Peer, ops: unknown[], seq = 1): Promise<RawLink> {
  const link = await handshake(brain, peer);
  link.send({ type: 'cursor', cursor: cursorOf(peer), window: 4 });
  link.send({ type: 'batch', seq, cursor: cursorOf(peer), ops });
  return link;
}

// ── The cases ──────────────────────────────────────────────────────────────────────────────────────

void test('bad input on /sync is refused with its code and counted once; nothing applies; the brain keeps syncing', { timeout: 180_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  const peer = await pairPeer(brain, newIdentity(), 'test peer');
  await whenSyncAnswers(brain, peer);
  // The refusals below are checked against protocol/sync-link.ts's table: it is the documented one.
  assert.deepEqual(documentedRefusals(), SYNC_REFUSALS);
  await t.test('a paired peer syncs a note over a good session, counting no failure', () => assertStillServes(brain, peer, 'the water meter is read on the 1st'));

  await t.test('a hello from a brain never paired is a 401 unknown_peer before the upgrade, or refuse unknown_peer (4001) in a frame', async () => {
    await refusedOnce(brain, peer, 'auth', () => assertHttpRefused(brain, encodeHelloHeader(new InitiatorHandshake(newIdentity(), peer.brain).hello()), 'unknown_peer'));
    await refusedOnce(brain, peer, 'auth', async () => {
      const link = await openLink(brain);
      link.send(new InitiatorHandshake(newIdentity(), peer.brain).hello());
      await assertRefused(link, 'unknown_peer');
    });
  });

  await t.test('a hello from a forgotten peer is a 401 revoked_peer before the upgrade', async () => {
    const gone = await pairPeer(brain, newIdentity(), 'gone peer');
    await syncOneNote(brain, gone, 'a note from the peer about to be forgotten');
    assert.equal((await brain.api(`/api/sync/peers/${gone.identity.brainId}`, { method: 'DELETE' })).status, 200);
    await refusedOnce(brain, peer, 'auth', () => assertHttpRefused(brain, encodeHelloHeader(new InitiatorHandshake(gone.identity, gone.brain).hello()), 'revoked_peer'));
  });

  await t.test('a hello with a key other than the pinned one is a 401 key_mismatch before the upgrade', () => {
    const impostor = identityOf(peer.identity.brainId, generateKeypair());
    return refusedOnce(brain, peer, 'auth', () => assertHttpRefused(brain, encodeHelloHeader(new InitiatorHandshake(impostor, peer.brain).hello()), 'key_mismatch'));
  });

  await t.test('a hello header that is no good hello is refused with its HTTP status before the upgrade', async (st) => {
    const hello = (): SyncFrames['hello'] => new InitiatorHandshake(peer.identity, peer.brain).hello();
    const header = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
    const bad: [string, string, SyncRefusalCode, string][] = [
      ['over 1024 characters', 'A'.repeat(1025), 'too_large', 'too_large'],
      ['not base64url', `${encodeHelloHeader(hello())}+/=`, 'malformed', 'protocol'],
      ['not JSON', Buffer.from('{"type":"hello",').toString('base64url'), 'malformed', 'protocol'],
      ['a hello with an extra field', header({ ...hello(), extra: 1 }), 'malformed', 'protocol'],
      ['another frame than a hello', header({ type: 'ping', n: 1 }), 'unexpected', 'protocol'],
      ['another link version', header({ ...hello(), v: SYNC_LINK_VERSION + 1 }), 'version', 'protocol'],
      ['a hello meant for another brain', header({ ...hello(), to: randomUUID() }), 'wrong_peer', 'auth'],
    ];
    for (const [what, value, code, reason] of bad) await st.test(what, () => refusedOnce(brain, peer, reason, () => assertHttpRefused(brain, value, code)));
  });

  await t.test('a hello nonce seen before is a replay: a 401 before the upgrade, or refuse replay (4005) in a frame', async () => {
    const nonce = randomBytes(32).toString('base64url');
    const first = await handshake(brain, peer, { nonce });
    first.send({ type: 'bye' });
    assert.equal((await first.closed).code, SyncCloseCode.normal, 'the first link with the nonce ends cleanly');
    await refusedOnce(brain, peer, 'replay', () => assertHttpRefused(brain, encodeHelloHeader(new InitiatorHandshake(peer.identity, peer.brain, () => nonce).hello()), 'replay'));
    await refusedOnce(brain, peer, 'replay', async () => {
      const link = await openLink(brain);
      link.send(new InitiatorHandshake(peer.identity, peer.brain, () => nonce).hello());
      await assertRefused(link, 'replay');
    });
  });

  await t.test('a proof whose signature does not verify is refused bad_signature (4001)', async () => {
    // One character of the real signature changed (not the last, whose low bits are padding).
    const flip = (sig: string): string => `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
    await refusedOnce(brain, peer, 'auth', async () => assertRefused(await handshake(brain, peer, { proof: flip }), 'bad_signature'));
    // A well-made signature over this connection's transcript, by a key that is not the pinned one.
    const other = identityOf(peer.identity.brainId, generateKeypair());
    const nonce = randomBytes(32).toString('base64url');
    const forged = (_sig: string, c: SyncFrames['challenge']): string =>
      signText(
        other,
        handshakeTranscript({
          context: SYNC_CONTEXT,
          version: SYNC_LINK_VERSION,
          role: 'initiator',
          initiator: peer.identity.brainId,
          responder: peer.brain.brainId,
          initiatorKey: keyFingerprint(peer.identity.publicKey),
          responderKey: c.key,
          initiatorNonce: nonce,
          responderNonce: c.nonce,
        }),
      );
    await refusedOnce(brain, peer, 'auth', async () => assertRefused(await handshake(brain, peer, { nonce, proof: forged }), 'bad_signature'));
  });

  await t.test('a batch before the handshake is refused unexpected (4002): as the first frame, or instead of the proof', async () => {
    await refusedOnce(brain, peer, 'protocol', async () => {
      const link = await openLink(brain);
      link.send({ type: 'batch', seq: 1, cursor: cursorOf(peer), ops: [noteOp(peer, 'a note sent before any handshake')] });
      await assertRefused(link, 'unexpected');
    });
    await refusedOnce(brain, peer, 'protocol', async () => {
      const link = await openLink(brain, encodeHelloHeader(new InitiatorHandshake(peer.identity, peer.brain).hello()));
      await link.next('challenge');
      link.send({ type: 'batch', seq: 1, cursor: cursorOf(peer), ops: [noteOp(peer, 'a note sent instead of the proof')] });
      await assertRefused(link, 'unexpected');
    });
  });

  await t.test('after the handshake, not JSON, a binary frame or a frame with a bad field is refused malformed (4002)', async (st) => {
    const bad: [string, (link: RawLink) => void][] = [
      ['not JSON', (link) => link.sendRaw('{"type":"cursor",')],
      ['a binary frame', (link) => link.sendRaw(Buffer.from(encodeSyncFrame({ type: 'cursor', cursor: cursorOf(peer), window: 4 })), true)],
      ['a cursor frame with window 0', (link) => link.send({ type: 'cursor', cursor: cursorOf(peer), window: 0 })],
      ['a batch frame numbered 0', (link) => link.send({ type: 'batch', seq: 0, cursor: cursorOf(peer), ops: [] })],
      ['an ack frame with an extra field', (link) => link.send({ type: 'ack', seq: 1, cursor: {}, extra: true })],
      ['a frame of no known type', (link) => link.send({ type: 'gossip' })],
    ];
    for (const [what, send] of bad) {
      await st.test(what, () =>
        refusedOnce(brain, peer, 'protocol', async () => {
          const link = await handshake(brain, peer);
          send(link);
          await assertRefused(link, 'malformed');
        }),
      );
    }
  });

  await t.test('after the handshake, a frame out of turn is refused unexpected (4002)', async (st) => {
    const bad: [string, (link: RawLink) => void][] = [
      ['a second hello', (link) => link.send(new InitiatorHandshake(peer.identity, peer.brain).hello())],
      ['a welcome from the initiator', (link) => link.send({ type: 'welcome' })],
      ['an ack of a batch never sent', (link) => link.send({ type: 'ack', seq: 3, cursor: {} })],
      ['a batch numbered beyond the receive window', (link) => link.send({ type: 'batch', seq: 1000, cursor: cursorOf(peer), ops: [] })],
    ];
    for (const [what, send] of bad) {
      await st.test(what, () =>
        refusedOnce(brain, peer, 'protocol', async () => {
          const link = await handshake(brain, peer);
          send(link);
          await assertRefused(link, 'unexpected');
        }),
      );
    }
  });

  await t.test('a frame over 1 MiB closes the link 1009, counted too_large: after the handshake, or as the first frame', async () => {
    const big = noteOp(peer, 'x'.repeat(1024));
    const oversized = { type: 'batch', seq: 1, cursor: cursorOf(peer), ops: Array.from({ length: 1100 }, () => big) };
    await refusedOnce(brain, peer, 'too_large', async () => {
      const link = await handshake(brain, peer);
      link.send(oversized);
      assert.equal((await link.closed).code, SyncCloseCode.too_large);
    });
    await refusedOnce(brain, peer, 'too_large', async () => {
      const link = await openLink(brain);
      link.send(oversized);
      assert.equal((await link.closed).code, SyncCloseCode.too_large);
    });
  });

  await t.test('a dialler that says nothing is refused timeout (4004) when the handshake time is up', () =>
    refusedOnce(brain, peer, 'timeout', async () => {
      const link = await openLink(brain);
      // The handshake gets 10 s (protocol/sync-link.ts), and the brain checks its timers every second.
      const refuse = await link.next('refuse', SYNC_LINK_DEFAULTS.handshakeTimeoutMs + 5_000);
      assert.equal(refuse.code, 'timeout');
      assert.equal((await link.closed).code, SYNC_REFUSALS.timeout.close);
    }),
  );

  await t.test('a batch holding a forged op is refused forged (4002) and applies nothing, not even its good ops', async (st) => {
    const forgeries: [string, () => unknown][] = [
      ['an op id naming another seq', () => ({ ...noteOp(peer, 'forged: op id', peer.log.length + 2), op_id: `${peer.identity.brainId}:${peer.log.length + 9}` })],
      [
        'an op posing as another brain\'s (its stamp is the sender\'s)',
        () => {
          const other = randomUUID();
          return { ...noteOp(peer, 'forged: origin', 1), origin: other, op_id: `${other}:1` };
        },
      ],
      ['a stamp of another brain', () => ({ ...noteOp(peer, 'forged: stamp', peer.log.length + 2), hlc: encodeHlc({ ...peer.clock.now(), brain: randomUUID() }) })],
      [
        'a fact under another fact\'s id',
        () =>
          stampOp(
            { kind: 'triple.put', record_id: tripleId('Anna', 'likes', 'coffee'), body: { subject: 'Anna', predicate: 'likes', object: 'green tea', source: 'user', confidence: 0.9 } },
            peer.identity.brainId,
            peer.log.length + 2,
            peer.clock.now(),
          ),
      ],
    ];
    for (const [what, forge] of forgeries) {
      await st.test(what, () =>
        refusedOnce(brain, peer, 'auth', async () => {
          const link = await sendBatch(brain, peer, [noteOp(peer, `a good note beside a forgery: ${what}`), forge()]);
          await assertRefused(link, 'forged');
        }),
      );
    }
  });

  await t.test('a batch holding an op stamped 2 days ahead is refused clock_skew (4006); the same op stamped now applies later', async () => {
    const text = 'a note from a brain whose clock runs two days ahead';
    const future = noteOp(peer, text, peer.log.length + 1, { wall: Date.now() + 2 * DAY_MS, logical: 0, brain: peer.identity.brainId });
    // The good session after the refusal carries the same op (its id, record and body), stamped now.
    const now = { op: { ...future, hlc: encodeHlc(peer.clock.now()) }, text };
    await refusedOnce(brain, peer, 'clock_skew', async () => assertRefused(await sendBatch(brain, peer, [future]), 'clock_skew'), now);
    assert.equal((await noteTexts(brain)).filter((n) => n === text).length, 1);
  });

  await t.test('a malformed op inside an otherwise good batch refuses the whole batch malformed (4002)', () =>
    refusedOnce(brain, peer, 'protocol', async () => {
      const first = noteOp(peer, 'a good note before a malformed op');
      const bad = { ...noteOp(peer, 'placeholder', peer.log.length + 2), body: { text: '', source: 'user', tags: [], created_at: Date.now() } };
      const last = noteOp(peer, 'a good note after a malformed op', peer.log.length + 3);
      await assertRefused(await sendBatch(brain, peer, [first, bad, last]), 'malformed');
    }),
  );

  await t.test('the same good batch sent twice (same seq) is applied once and acknowledged twice', async () => {
    const before = await failures(brain);
    const text = 'the spare fuse is in the hall drawer';
    const op = noteOp(peer, text);
    const link = await sendBatch(brain, peer, [op]);
    const firstAck = await link.next('ack');
    link.send({ type: 'batch', seq: 1, cursor: cursorOf(peer), ops: [op] });
    const secondAck = await link.next('ack');
    peer.log.push(op);
    assert.deepEqual([firstAck.seq, secondAck.seq], [1, 1]);
    assert.equal(firstAck.cursor[peer.identity.brainId], op.seq);
    assert.deepEqual(secondAck, firstAck);
    link.send({ type: 'bye' });
    assert.equal((await link.closed).code, SyncCloseCode.normal);
    assert.equal((await noteTexts(brain)).filter((n) => n === text).length, 1, 'one note');
    assert.deepEqual(await failures(brain), before, 'a duplicate is no failure');
    await assertStillServes(brain, peer, 'still syncing after a duplicate batch');
  });

  await t.test('a duplicate batch arriving while the first copy is still applied is applied once, and the link goes on', async () => {
    const before = await failures(brain);
    const text = 'the bins go out on Tuesday night';
    const op = noteOp(peer, text);
    const link = await sendBatch(brain, peer, [op]);
    link.send({ type: 'batch', seq: 1, cursor: cursorOf(peer), ops: [op] });
    // Frames are handled in order: the pong says both copies of the batch were received.
    link.send({ type: 'ping', n: 1 });
    assert.equal((await link.next('pong')).n, 1);
    const ack = await link.next('ack');
    peer.log.push(op);
    assert.equal(ack.seq, 1);
    assert.equal(ack.cursor[peer.identity.brainId], op.seq);
    link.send({ type: 'bye' });
    assert.equal((await link.closed).code, SyncCloseCode.normal);
    assert.equal((await noteTexts(brain)).filter((n) => n === text).length, 1, 'one note');
    assert.deepEqual(await failures(brain), before, 'a duplicate is no failure');
    await assertStillServes(brain, peer, 'still syncing after a duplicate batch sent back to back');
  });

  await t.test('the brain logged no error or crash and is still running', () => assertNoErrorLogged(brain));
});

/** The brain runs, answers /health, logged nothing at error or fatal and no unhandled rejection or exception, and stops cleanly. */
async function assertNoErrorLogged(brain: BrainProcess): Promise<void> {
  assert.equal((await fetch(`${brain.url}/health`)).status, 200);
  assert.equal(brain.child.exitCode, null);
  const bad = brain.lines.filter((line) => {
    const entry = JSON.parse(line) as { level?: number; msg?: string };
    return (entry.level ?? 0) >= 50 || /uncaught|unhandled/i.test(entry.msg ?? '');
  });
  assert.deepEqual(bad, []);
  assert.equal(await brain.stop(), 0, 'and stops cleanly');
}

// Ops are not signed by their origin (a peer relays other brains' ops), and an op of this brain's own
// origin that comes back from a peer raises its own op counter (a database restored from a backup,
// daemon/sync/apply-remote.ts). So one op posing as the brain's own, numbered at the top of the seq
// range, must not leave the brain unable to number its next op.
void test('an op posing as the brain\'s own, numbered beyond the seq range or far beyond its own count, is refused and leaves the brain able to write and sync', { timeout: 60_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());
  const peer = await pairPeer(brain, newIdentity(), 'test peer');
  await whenSyncAnswers(brain, peer);
  const own = peer.brain.brainId;
  const body = { text: 'a note posing as the brain\'s own', source: 'user', tags: [], created_at: Date.now() };
  // Beyond the op schema's seq range (malformed), and within it but far beyond this brain's own count (forged).
  for (const seq of [Number.MAX_SAFE_INTEGER, 2 ** 48]) {
    const posing = stampOp({ kind: 'note.put', record_id: `note_${randomBytes(8).toString('hex')}`, base: null, body }, own, seq, { wall: Date.now(), logical: 0, brain: own });
    const link = await sendBatch(brain, peer, [posing]);
    await assertRefused(link, seq === 2 ** 48 ? 'forged' : 'malformed');
  }

  const written = await brain.api('/api/memory/note', { method: 'POST', body: JSON.stringify({ text: 'the boiler pressure is 1.5 bar' }) });
  assert.equal(written.status, 201, `a local note after the posing op: ${await written.text()}`);
  await assertStillServes(brain, peer, 'still syncing after an op posing as the brain\'s own');
  await assertNoErrorLogged(brain);
});
