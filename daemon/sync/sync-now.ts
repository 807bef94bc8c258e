// `svc sync now` (POST /api/sync/now): dial every peer (or one) at once and wait until each is caught
// up — a session established, nothing left to send or apply on this side, and this brain holding
// exactly what the peer is known to hold (its cursor frame, the cursors its batches carry, its acks)
// — or until the link fails, or the time is up.
import type { Cursor } from '../../protocol/sync-link';
import type { SyncNowResult } from '../../protocol/sync-api';
import { sameCursor } from './peer-cursors';
import type { PeerAddress, SyncLinks } from './sync-links';
import type { PeerRecord } from './sync-peers';

/** How often the wait looks again. */
export const NOW_POLL_MS = 100;

export interface WaitDeps {
  readonly links: SyncLinks;
  readonly peers: readonly PeerRecord[];
  readonly address: (peer: PeerRecord) => PeerAddress | null;
  /** This brain's cursor now. */
  readonly cursor: () => Promise<Cursor>;
  readonly timeoutMs: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

type Outcome = SyncNowResult['peers'][number];


export async function waitForSync(deps: WaitDeps): Promise<SyncNowResult> {
  const clock = deps.now ?? Date.now;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const started = clock();
  const deadline = started + deps.timeoutMs;
  for (const peer of deps.peers) deps.links.dialNow(peer.brainId);
  const results = new Map<string, Outcome>();
  for (;;) {
    const own = await deps.cursor();
    for (const peer of deps.peers) {
      if (results.has(peer.brainId)) continue;
      const outcome = look(deps, peer, own, started);
      if (outcome !== null) results.set(peer.brainId, outcome);
    }
    if (results.size === deps.peers.length || clock() >= deadline) break;
    await sleep(NOW_POLL_MS);
  }
  return {
    peers: deps.peers.map((p) => {
      const open = deps.links.connected(p.brainId)?.session.progress();
      return results.get(p.brainId) ?? { brain_id: p.brainId, outcome: 'timeout', sent: open?.sent ?? 0, received: open?.received ?? 0, failure: deps.links.lastFailure(p.brainId) };
    }),
  };
}

/** Where one peer stands: an outcome, or null to look again. */
function look(deps: WaitDeps, peer: PeerRecord, own: Cursor, started: number): Outcome | null {
  const open = deps.links.connected(peer.brainId);
  if (open !== null) {
    const p = open.session.progress();
    if (p !== null && p.quiet && p.peerHas !== null && sameCursor(own, p.peerHas)) return { brain_id: peer.brainId, outcome: 'synced', sent: p.sent, received: p.received, failure: null };
    return null;
  }
  const failure = deps.links.lastFailure(peer.brainId);
  if (failure !== null && failure.at >= started) return { brain_id: peer.brainId, outcome: 'failed', sent: 0, received: 0, failure };
  if (deps.address(peer) === null) return { brain_id: peer.brainId, outcome: 'unreachable', sent: 0, received: 0, failure };
  return null;
}
