// The /sync handshake (docs/sync.md "The link"): every connection proves both brains to each other
// with their Ed25519 keys pinned at pairing; no secret crosses the wire.
//
//   initiator                                   responder
//   hello {v, from, to, key fp, nonce_i}  ──▶   version, pinned and not revoked, fingerprint, fresh nonce
//                                         ◀──   challenge {v, from, key fp, nonce_r, sig_r(T responder)}
//   verify sig_r with the pinned key;
//   proof {sig_i(T initiator)}            ──▶   verify sig_i with the pinned key
//                                         ◀──   welcome
//
// T is the transcript: the context string, the version, the signer's role, both ids, both key
// fingerprints and both nonces. Each side signs over the other's fresh nonce, so a recorded signature
// is worth nothing on a new connection; the role keeps one side's signature from being reflected as the
// other's, the context keeps a signature made for anything else (pairing, another protocol) from
// verifying here. The responder also remembers recent hello nonces so a replayed hello is refused as such.
import { SYNC_CONTEXT, SYNC_LINK_VERSION, type HelloFrame, type SyncFrame } from '../protocol/sync-link';
import { freshNonce, keyFingerprint, signText, verifyText, type SyncIdentity } from './identity-keys';
import type { PinnedPeer } from './identity-pairing';
import { refusal, type SyncRefusal } from './link-frames';

/** The peers pairing pinned, by brain id. */
export interface PeerDirectory {
  peer(brainId: string): PinnedPeer | undefined;
}

/** Hello nonces a responder has seen: `remember` answers whether `nonce` was seen before, and records it. */
export interface NonceLedger {
  remember(nonce: string): boolean;
}

/** The last `capacity` nonces, oldest forgotten first (a replay of anything older fails its signature anyway). */
export class RecentNonces implements NonceLedger {
  private readonly seen = new Set<string>();
  constructor(private readonly capacity = 4096) {}

  remember(nonce: string): boolean {
    if (this.seen.has(nonce)) return true;
    this.seen.add(nonce);
    if (this.seen.size > this.capacity) this.seen.delete(this.seen.values().next().value as string);
    return false;
  }
}

export type HandshakeRole = 'initiator' | 'responder';

/** What the handshake does with one frame: what to send back, and whether it goes on, succeeded or failed. */
export type HandshakeStep =
  | { readonly kind: 'continue'; readonly send: SyncFrame }
  | { readonly kind: 'established'; readonly send: SyncFrame | null; readonly peer: PinnedPeer }
  | { readonly kind: 'refused'; readonly send: SyncFrame | null; readonly refusal: SyncRefusal };

export interface TranscriptFields {
  readonly context: string;
  readonly version: number;
  readonly role: HandshakeRole;
  readonly initiator: string;
  readonly responder: string;
  readonly initiatorKey: string;
  readonly responderKey: string;
  readonly initiatorNonce: string;
  readonly responderNonce: string;
}

/** The text a side signs (its `role`); every field is fixed-alphabet, so the line breaks are unambiguous. */
export const handshakeTranscript = (t: TranscriptFields): string =>
  [t.context, String(t.version), t.role, t.initiator, t.responder, t.initiatorKey, t.responderKey, t.initiatorNonce, t.responderNonce].join('\n');

/** Refuses the link and tells the peer why. */
const refuse = (code: SyncRefusal['code'], message: string): HandshakeStep => ({ kind: 'refused', send: { type: 'refuse', code, message }, refusal: refusal(code, message) });
/** The peer refused us: nothing to answer. */
const refusedBy = (frame: Extract<SyncFrame, { type: 'refuse' }>): HandshakeStep => ({
  kind: 'refused',
  send: null,
  refusal: refusal(frame.code, `the peer refused the link: ${frame.message ?? frame.code}`),
});
const unexpected = (frame: SyncFrame, state: string): HandshakeStep => refuse('unexpected', `a ${frame.type} frame while ${state}`);

/** The dialling end: knows which pinned peer it means to reach. */
export class InitiatorHandshake {
  private state: 'new' | 'hello_sent' | 'proved' | 'done' = 'new';
  private readonly nonce: string;

  constructor(
    private readonly identity: SyncIdentity,
    private readonly peer: PinnedPeer,
    nonce: () => string = freshNonce,
  ) {
    this.nonce = nonce();
  }

  /** The first frame (or the content of SYNC_HELLO_HEADER). */
  hello(): HelloFrame {
    this.state = 'hello_sent';
    return { type: 'hello', v: SYNC_LINK_VERSION, from: this.identity.brainId, to: this.peer.brainId, key: keyFingerprint(this.identity.publicKey), nonce: this.nonce };
  }

  receive(frame: SyncFrame): HandshakeStep {
    if (frame.type === 'refuse') return this.finish(refusedBy(frame));
    if (this.state === 'hello_sent' && frame.type === 'challenge') return this.finish(this.challenge(frame));
    if (this.state === 'proved' && frame.type === 'welcome') return this.finish({ kind: 'established', send: null, peer: this.peer });
    return this.finish(unexpected(frame, `the initiator's handshake is ${this.state}`));
  }

  private challenge(c: Extract<SyncFrame, { type: 'challenge' }>): HandshakeStep {
    if (c.v !== SYNC_LINK_VERSION) return refuse('version', `the peer speaks link version ${c.v}; this brain speaks ${SYNC_LINK_VERSION}`);
    if (c.from !== this.peer.brainId) return refuse('wrong_peer', `dialled ${this.peer.brainId}, answered by ${c.from}`);
    if (this.peer.revoked) return refuse('revoked_peer', `${c.from} was forgotten`);
    if (c.key !== keyFingerprint(this.peer.publicKey)) return refuse('key_mismatch', `${c.from} presents a key other than the one pinned at pairing`);
    if (c.nonce === this.nonce) return refuse('replay', 'the challenge reflects our own nonce');
    const fields = this.fields(c.nonce);
    if (!verifyText(this.peer.publicKey, handshakeTranscript({ ...fields, role: 'responder' }), c.sig)) return refuse('bad_signature', `${c.from}'s challenge signature does not verify`);
    this.state = 'proved';
    return { kind: 'continue', send: { type: 'proof', sig: signText(this.identity, handshakeTranscript({ ...fields, role: 'initiator' })) } };
  }

  private fields(responderNonce: string): Omit<TranscriptFields, 'role'> {
    return {
      context: SYNC_CONTEXT,
      version: SYNC_LINK_VERSION,
      initiator: this.identity.brainId,
      responder: this.peer.brainId,
      initiatorKey: keyFingerprint(this.identity.publicKey),
      responderKey: keyFingerprint(this.peer.publicKey),
      initiatorNonce: this.nonce,
      responderNonce,
    };
  }

  private finish(step: HandshakeStep): HandshakeStep {
    if (step.kind !== 'continue') this.state = 'done';
    return step;
  }
}

/** The answering end: learns who dials from the hello and checks it against the pinned peers. */
export class ResponderHandshake {
  private state: 'new' | 'challenged' | 'done' = 'new';
  private readonly nonce: string;
  private hello: HelloFrame | undefined;
  private peer: PinnedPeer | undefined;

  constructor(
    private readonly identity: SyncIdentity,
    private readonly peers: PeerDirectory,
    private readonly nonces: NonceLedger,
    nonce: () => string = freshNonce,
  ) {
    this.nonce = nonce();
  }

  receive(frame: SyncFrame): HandshakeStep {
    if (frame.type === 'refuse') return this.finish(refusedBy(frame));
    if (this.state === 'new' && frame.type === 'hello') return this.finish(this.challenge(frame));
    if (this.state === 'challenged' && frame.type === 'proof') return this.finish(this.proof(frame.sig));
    return this.finish(unexpected(frame, `the responder's handshake is ${this.state}`));
  }

  private challenge(h: HelloFrame): HandshakeStep {
    if (h.v !== SYNC_LINK_VERSION) return refuse('version', `link version ${h.v} is not spoken here; this brain speaks ${SYNC_LINK_VERSION}`);
    if (h.to !== this.identity.brainId || h.from === this.identity.brainId) return refuse('wrong_peer', `the hello from ${h.from} is meant for ${h.to}, not this brain`);
    const peer = this.peers.peer(h.from);
    if (peer === undefined) return refuse('unknown_peer', `${h.from} is not a paired brain`);
    if (peer.revoked) return refuse('revoked_peer', `${h.from} was forgotten`);
    if (h.key !== keyFingerprint(peer.publicKey)) return refuse('key_mismatch', `${h.from} presents a key other than the one pinned at pairing`);
    if (h.nonce === this.nonce || this.nonces.remember(h.nonce)) return refuse('replay', `a hello nonce from ${h.from} seen before`);
    this.hello = h;
    this.peer = peer;
    this.state = 'challenged';
    return { kind: 'continue', send: { type: 'challenge', v: SYNC_LINK_VERSION, from: this.identity.brainId, key: keyFingerprint(this.identity.publicKey), nonce: this.nonce, sig: signText(this.identity, this.transcript(h, peer, 'responder')) } };
  }

  private proof(sig: string): HandshakeStep {
    const { hello, peer } = this;
    if (hello === undefined || peer === undefined) return refuse('unexpected', 'a proof before the hello');
    if (!verifyText(peer.publicKey, this.transcript(hello, peer, 'initiator'), sig)) return refuse('bad_signature', `${peer.brainId}'s proof does not verify`);
    return { kind: 'established', send: { type: 'welcome' }, peer };
  }

  private transcript(h: HelloFrame, peer: PinnedPeer, role: HandshakeRole): string {
    return handshakeTranscript({
      context: SYNC_CONTEXT,
      version: SYNC_LINK_VERSION,
      role,
      initiator: h.from,
      responder: this.identity.brainId,
      initiatorKey: keyFingerprint(peer.publicKey),
      responderKey: keyFingerprint(this.identity.publicKey),
      initiatorNonce: h.nonce,
      responderNonce: this.nonce,
    });
  }

  private finish(step: HandshakeStep): HandshakeStep {
    if (step.kind !== 'continue') this.state = 'done';
    return step;
  }
}
