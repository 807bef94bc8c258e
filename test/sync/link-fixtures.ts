// Shared by the link and session tests: brain identities, a directory of pinned peers, and a replica
// model of the data layer behind a session. The replica keeps each origin's ops in order, so what a
// test asserts about the link is plain: an op applied twice or an op applied past a gap is recorded.
import { randomUUID } from 'node:crypto';
import type { Cursor } from '../../protocol/sync-link';
import { generateKeypair, identityOf, type SyncIdentity } from '../../sync/identity-keys';
import type { PinnedPeer } from '../../sync/identity-pairing';
import type { PeerDirectory } from '../../sync/link-handshake';
import type { SyncData } from '../../sync/session-stream';

export const newIdentity = (): SyncIdentity => identityOf(randomUUID(), generateKeypair());
export const pinned = (identity: SyncIdentity, revoked = false): PinnedPeer => ({ brainId: identity.brainId, publicKey: identity.publicKey, revoked });
export const directory = (...peers: PinnedPeer[]): PeerDirectory => ({ peer: (id) => peers.find((p) => p.brainId === id) });

/** One op as the replica model writes it: its origin, its number there, and a payload of some size. */
export interface ModelOp {
  readonly origin: string;
  readonly n: number;
  readonly body: string;
}

const isModelOp = (v: unknown): v is ModelOp => typeof v === 'object' && v !== null && typeof (v as ModelOp).origin === 'string' && typeof (v as ModelOp).n === 'number';
/** A turn of the event loop, so applies and pulls interleave with frame delivery as they would on a socket. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The data layer of one brain, in memory (it survives the sessions, as the database does). */
export class ReplicaModel implements SyncData {
  readonly log = new Map<string, ModelOp[]>();
  /** Ops applied although this replica had them already. */
  readonly duplicates: ModelOp[] = [];
  /** Ops that arrived before an earlier op of their origin. */
  readonly gaps: ModelOp[] = [];
  applies = 0;

  constructor(readonly brainId: string) {}

  write(count: number, bodyBytes = 20): void {
    const own = this.log.get(this.brainId) ?? [];
    for (let i = 0; i < count; i++) own.push({ origin: this.brainId, n: own.length + 1, body: 'x'.repeat(bodyBytes) });
    this.log.set(this.brainId, own);
  }

  now(): Cursor {
    return Object.fromEntries([...this.log].map(([origin, ops]) => [origin, ops.length]));
  }

  cursor(): Promise<Cursor> {
    return Promise.resolve(this.now());
  }

  async *ops(since: Cursor, maxBytes: number): AsyncIterable<unknown[]> {
    const missing = [...this.log].flatMap(([origin, ops]) => ops.slice(since[origin] ?? 0));
    let batch: ModelOp[] = [];
    let bytes = 0;
    for (const op of missing) {
      const size = JSON.stringify(op).length + 1;
      if (batch.length > 0 && bytes + size > maxBytes) {
        await turn();
        yield batch;
        batch = [];
        bytes = 0;
      }
      batch.push(op);
      bytes += size;
    }
    if (batch.length > 0) yield batch;
  }

  async apply(ops: unknown[]): Promise<Cursor> {
    await turn();
    this.applies++;
    for (const op of ops) {
      if (!isModelOp(op)) throw new Error(`not a model op: ${JSON.stringify(op)}`);
      const have = this.log.get(op.origin) ?? [];
      if (op.n <= have.length) this.duplicates.push(op);
      else if (op.n > have.length + 1) this.gaps.push(op);
      else have.push(op);
      this.log.set(op.origin, have);
    }
    return this.now();
  }

  /** Every op, as `origin:n`, sorted: what two replicas compare. */
  contents(): string[] {
    return [...this.log.values()].flat().map((op) => `${op.origin}:${op.n}`).sort();
  }
}
