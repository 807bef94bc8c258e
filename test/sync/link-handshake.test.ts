// The handshake: two honest ends always agree on each other; a forged or bit-flipped signature, a
// swapped key (another key under a paired brain's id), a replayed hello or proof, a signature over
// another context, a reflected signature, another version, an unknown, revoked or wrong brain are each
// refused with their code, and the refused end tells the other why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SYNC_CONTEXT, SYNC_LINK_VERSION, type SyncFrame } from '../../protocol/sync-link';
import { keyFingerprint, signText, verifyText, type SyncIdentity } from '../../sync/identity-keys';
import { handshakeTranscript, InitiatorHandshake, RecentNonces, ResponderHandshake, type HandshakeStep, type NonceLedger } from '../../sync/link-handshake';
import { directory, newIdentity, pinned } from './link-fixtures';

type Frame<T extends SyncFrame['type']> = Extract<SyncFrame, { type: T }>;

interface Ends {
  readonly a: SyncIdentity;
  readonly b: SyncIdentity;
  readonly initiator: InitiatorHandshake;
  readonly responder: ResponderHandshake;
}

const ends = (opts: { a?: SyncIdentity; b?: SyncIdentity; nonces?: NonceLedger; aAsB?: SyncIdentity } = {}): Ends => {
  const a = opts.a ?? newIdentity();
  const b = opts.b ?? newIdentity();
  return {
    a,
    b,
    initiator: new InitiatorHandshake(a, pinned(b)),
    responder: new ResponderHandshake(b, directory(pinned(opts.aAsB ?? a)), opts.nonces ?? new RecentNonces()),
  };
};

/** An initiator that has sent its hello (and waits for the challenge). */
const dialled = (identity: SyncIdentity, peer: ReturnType<typeof pinned>): InitiatorHandshake => {
  const i = new InitiatorHandshake(identity, peer);
  i.hello();
  return i;
};

const sent = <T extends SyncFrame['type']>(step: HandshakeStep, type: T): Frame<T> => {
  assert.equal(step.kind, 'continue', JSON.stringify(step));
  assert.equal(step.send?.type, type);
  return step.send as Frame<T>;
};

const refusedWith = (step: HandshakeStep, code: string): void => {
  assert.equal(step.kind, 'refused', JSON.stringify(step));
  if (step.kind === 'refused') assert.equal(step.refusal.code, code, step.refusal.message);
  assert.deepEqual(step.send === null ? null : { type: step.send.type, code: (step.send as Frame<'refuse'>).code }, { type: 'refuse', code });
};

/** A 64-byte signature with one bit flipped. */
const flip = (sig: string, bit: number): string => {
  const bytes = Buffer.from(sig, 'base64url');
  bytes[(bit >> 3) % 64]! ^= 1 << (bit & 7);
  return bytes.toString('base64url');
};

void test('property: two honest ends always agree, each on the other', () => {
  fc.assert(
    fc.property(fc.constant(null), () => {
      const { a, b, initiator, responder } = ends();
      const challenge = sent(responder.receive(initiator.hello()), 'challenge');
      const proof = sent(initiator.receive(challenge), 'proof');
      const done = responder.receive(proof);
      assert.equal(done.kind, 'established');
      if (done.kind === 'established') assert.deepEqual(done.peer, pinned(a));
      const welcomed = initiator.receive(done.send!);
      assert.equal(welcomed.kind, 'established');
      if (welcomed.kind === 'established') assert.deepEqual(welcomed.peer, pinned(b));
    }),
    { numRuns: 40 },
  );
});

void test('property: a forged or bit-flipped signature is refused at either end', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 64, maxLength: 64 }), fc.nat(511), fc.boolean(), (random, bit, forgeRandom) => {
      const one = ends();
      const challenge = sent(one.responder.receive(one.initiator.hello()), 'challenge');
      const badSig = forgeRandom ? Buffer.from(random).toString('base64url') : flip(challenge.sig, bit);
      refusedWith(one.initiator.receive({ ...challenge, sig: badSig }), 'bad_signature');

      const two = ends();
      const proof = sent(two.initiator.receive(sent(two.responder.receive(two.initiator.hello()), 'challenge')), 'proof');
      refusedWith(two.responder.receive({ type: 'proof', sig: forgeRandom ? Buffer.from(random).toString('base64url') : flip(proof.sig, bit) }), 'bad_signature');
    }),
    { numRuns: 60 },
  );
});

void test('a swapped key: another key under a paired brain\'s id is refused, named or not', () => {
  const a = newIdentity();
  const mallory = { ...newIdentity(), brainId: a.brainId };
  // Presenting its own key: the fingerprint is not the pinned one.
  const named = ends({ a: mallory, aAsB: a });
  refusedWith(named.responder.receive(named.initiator.hello()), 'key_mismatch');
  // Presenting a's fingerprint: a proof over the very transcript b expects, signed with mallory's key, does not verify.
  const b = newIdentity();
  const responder = new ResponderHandshake(b, directory(pinned(a)), new RecentNonces());
  const hello = { ...new InitiatorHandshake(mallory, pinned(b)).hello(), key: keyFingerprint(a.publicKey) };
  const challenge = sent(responder.receive(hello), 'challenge');
  const transcript = handshakeTranscript({
    context: SYNC_CONTEXT,
    version: SYNC_LINK_VERSION,
    role: 'initiator',
    initiator: a.brainId,
    responder: b.brainId,
    initiatorKey: keyFingerprint(a.publicKey),
    responderKey: keyFingerprint(b.publicKey),
    initiatorNonce: hello.nonce,
    responderNonce: challenge.nonce,
  });
  refusedWith(responder.receive({ type: 'proof', sig: signText(mallory, transcript) }), 'bad_signature');
  assert.ok(verifyText(a.publicKey, transcript, signText(a, transcript)), 'the same transcript signed by a itself verifies');
  // The other way: an impostor answering as b.
  const dialler = new InitiatorHandshake(a, pinned(b));
  const fakeB = new ResponderHandshake({ ...newIdentity(), brainId: b.brainId }, directory(pinned(a)), new RecentNonces());
  const fake = sent(fakeB.receive(dialler.hello()), 'challenge');
  refusedWith(dialler.receive(fake), 'key_mismatch');
  refusedWith(dialled(a, pinned(b)).receive({ ...fake, key: keyFingerprint(b.publicKey) }), 'bad_signature');
});

void test('a replayed hello is refused as a replay; replayed to a fresh responder, its old proof does not verify', () => {
  const nonces = new RecentNonces();
  const { a, b, initiator, responder } = ends({ nonces });
  const hello = initiator.hello();
  const proof = sent(initiator.receive(sent(responder.receive(hello), 'challenge')), 'proof');
  assert.equal(responder.receive(proof).kind, 'established');
  const again = new ResponderHandshake(b, directory(pinned(a)), nonces);
  refusedWith(again.receive(hello), 'replay');
  // After a restart the ledger is empty: the hello passes, but the recorded proof covers another nonce.
  const restarted = new ResponderHandshake(b, directory(pinned(a)), new RecentNonces());
  sent(restarted.receive(hello), 'challenge');
  refusedWith(restarted.receive(proof), 'bad_signature');
});

void test('property: a proof signed over any other context, role or version does not verify', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), fc.constantFrom('context', 'role', 'version'), (context, what) => {
      fc.pre(what !== 'context' || context !== SYNC_CONTEXT);
      const { a, b, initiator, responder } = ends();
      const hello = initiator.hello();
      const challenge = sent(responder.receive(hello), 'challenge');
      const transcript = handshakeTranscript({
        context: what === 'context' ? context : SYNC_CONTEXT,
        version: what === 'version' ? SYNC_LINK_VERSION + 1 : SYNC_LINK_VERSION,
        role: what === 'role' ? 'responder' : 'initiator',
        initiator: a.brainId,
        responder: b.brainId,
        initiatorKey: keyFingerprint(a.publicKey),
        responderKey: keyFingerprint(b.publicKey),
        initiatorNonce: hello.nonce,
        responderNonce: challenge.nonce,
      });
      refusedWith(responder.receive({ type: 'proof', sig: signText(a, transcript) }), 'bad_signature');
    }),
    { numRuns: 40 },
  );
});

void test('the responder\'s signature reflected back as the proof does not verify', () => {
  const { initiator, responder } = ends();
  const challenge = sent(responder.receive(initiator.hello()), 'challenge');
  refusedWith(responder.receive({ type: 'proof', sig: challenge.sig }), 'bad_signature');
  const own = ends();
  const hello = own.initiator.hello();
  const reflected = sent(own.responder.receive(hello), 'challenge');
  refusedWith(own.initiator.receive({ ...reflected, nonce: hello.nonce }), 'replay');
});

void test('another version, an unknown, revoked or wrong brain, and frames out of turn are refused with their codes', () => {
  const { a, b, initiator, responder } = ends();
  refusedWith(responder.receive({ ...initiator.hello(), v: 2 }), 'version');
  refusedWith(new ResponderHandshake(b, directory(), new RecentNonces()).receive(initiator.hello()), 'unknown_peer');
  refusedWith(new ResponderHandshake(b, directory(pinned(a, true)), new RecentNonces()).receive(initiator.hello()), 'revoked_peer');
  refusedWith(new ResponderHandshake(b, directory(pinned(a)), new RecentNonces()).receive({ ...initiator.hello(), to: newIdentity().brainId }), 'wrong_peer');
  refusedWith(new ResponderHandshake(b, directory(pinned(a)), new RecentNonces()).receive({ type: 'proof', sig: 'A'.repeat(86) }), 'unexpected');

  const fresh = ends();
  const challenge = sent(fresh.responder.receive(fresh.initiator.hello()), 'challenge');
  refusedWith(dialled(fresh.a, pinned(fresh.b)).receive({ ...challenge, v: 0 }), 'version');
  refusedWith(dialled(fresh.a, pinned(newIdentity())).receive(challenge), 'wrong_peer');
  refusedWith(dialled(fresh.a, pinned(fresh.b, true)).receive(challenge), 'revoked_peer');
  refusedWith(fresh.initiator.receive({ type: 'welcome' }), 'unexpected');

  const told = responder.receive({ type: 'refuse', code: 'unknown_peer', message: 'who?' });
  assert.equal(told.kind, 'refused');
  assert.equal(told.send, null, 'a refusal is never answered with another');
});

void test('the nonce ledger remembers the most recent nonces and forgets the oldest', () => {
  const ledger = new RecentNonces(3);
  assert.deepEqual(['n1', 'n2', 'n3', 'n1', 'n4', 'n3', 'n1'].map((n) => ledger.remember(n)), [false, false, false, true, false, true, false]);
});
