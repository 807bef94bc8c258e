// What each peer is known to hold, kept durably (op-log.ts sync_peers), and the tombstone collection
// it allows (docs/sync.md "Tombstone collection"): a delete's tombstone goes once every peer this brain
// shares its memory with holds the delete, and this brain holds everything they hold. A peer whose
// cursor was never learnt holds nothing as far as this brain knows, so nothing is collected then.
// The cursors also answer "how far behind is a peer" while it is not connected.
import type { Cursor } from '../../protocol/sync-link';
import type { Store } from '../kernel/capability';
import { collectTombstones, peerCursor, savePeerCursor } from './op-log';

/** Two cursors name the same ops (an origin absent from one counts as 0). */
export function sameCursor(a: Cursor, b: Cursor): boolean {
  for (const origin of new Set([...Object.keys(a), ...Object.keys(b)])) if ((a[origin] ?? 0) !== (b[origin] ?? 0)) return false;
  return true;
}

/** How often tombstones are looked at. */
export const COLLECT_EVERY_MS = 10 * 60_000;

export class PeerCursors {
  private readonly known = new Map<string, Cursor>();

  constructor(private readonly store: Store) {}

  /** The peer's cursor as last saved, or null when never learnt. */
  get(peer: string): Cursor | null {
    const cached = this.known.get(peer);
    if (cached !== undefined) return cached;
    const saved = peerCursor(this.store, peer);
    if (saved !== null) this.known.set(peer, saved);
    return saved;
  }

  /** Saves what a peer is known to hold now, when it changed. */
  async record(peer: string, cursor: Cursor, at: number): Promise<void> {
    const last = this.get(peer);
    if (last !== null && sameCursor(last, cursor)) return;
    this.known.set(peer, { ...cursor });
    await this.store.write((db) => savePeerCursor(db, peer, cursor, at));
  }

  /** Collects the tombstones every one of `peers` holds; none when one of them was never heard from. */
  async collect(peers: readonly string[]): Promise<number> {
    const cursors = peers.map((p) => this.get(p));
    if (cursors.some((c) => c === null)) return 0;
    if (this.store.get('SELECT 1 AS one FROM sync_records WHERE tombstone IS NOT NULL LIMIT 1') === undefined) return 0;
    return this.store.write((db) => collectTombstones(db, cursors as Cursor[]));
  }
}
