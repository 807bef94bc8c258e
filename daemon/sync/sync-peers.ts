// The peer brains pairing pinned (docs/sync.md "Identity and pairing"), in brain.db under the component
// `sync-peers`: each peer's brain id and Ed25519 public key, its name, the pairing's device id on this
// brain (null when this brain completed the pairing), where to dial it, and when it was forgotten. The
// rows are read once at start and kept in memory, so the responder's handshake looks a peer up
// without touching SQLite; every change is written through before the cache changes.
import type { Migration, Store } from '../kernel/capability';
import type { PinnedPeer } from '../../sync/identity-pairing';
import type { PeerDirectory } from '../../sync/link-handshake';
import type { Cursor } from '../../protocol/sync-link';
import type { SyncFailureInfo, SyncPeerView } from '../../protocol/sync-api';

export const SYNC_PEERS_COMPONENT = 'sync-peers';

/** A brain's base URL `http(s)://host:port[/…]` as its /sync URL `ws(s)://host:port/sync`. */
export function syncUrlOf(base: string): string {
  const url = new URL(base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = '/sync';
  url.search = '';
  url.hash = '';
  return url.toString();
}

export const SYNC_PEERS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'peer brains pinned by pairing',
    up: `
      CREATE TABLE sync_pinned (
        brain_id TEXT PRIMARY KEY,
        public_key TEXT NOT NULL,
        name TEXT NOT NULL,
        device_id TEXT,
        url TEXT,
        paired_at INTEGER NOT NULL,
        forgotten_at INTEGER,
        last_synced_at INTEGER
      );
    `,
  },
];

export interface PeerRecord {
  readonly brainId: string;
  readonly publicKey: string;
  readonly name: string;
  /** The pairing's device on this brain (`svc pair list`); null when this brain completed the pairing. */
  readonly deviceId: string | null;
  /** Where pairing said it can be dialled; null when only it dials in. */
  readonly url: string | null;
  readonly pairedAt: number;
  readonly forgottenAt: number | null;
  readonly lastSyncedAt: number | null;
}

interface Row {
  brain_id: string;
  public_key: string;
  name: string;
  device_id: string | null;
  url: string | null;
  paired_at: number;
  forgotten_at: number | null;
  last_synced_at: number | null;
}

const fromRow = (r: Row): PeerRecord => ({
  brainId: r.brain_id,
  publicKey: r.public_key,
  name: r.name,
  deviceId: r.device_id,
  url: r.url,
  pairedAt: r.paired_at,
  forgottenAt: r.forgotten_at,
  lastSyncedAt: r.last_synced_at,
});

/** What the links know of a peer now (none when the link layer is not loaded: no peer was ever active). */
export interface PeerLiveState {
  readonly connected: 'outbound' | 'inbound' | null;
  readonly dialling: boolean;
  /** When the next dial is due, if one is. */
  readonly nextAttemptAt: number | null;
  readonly lastFailure: SyncFailureInfo | null;
}

/** `svc sync peers`'s row for one peer: `cursor` is what it is known to hold, `behind` counts what it lacks. */
export function peerView(peer: PeerRecord, address: { url: string; source: SyncPeerView['source'] } | null, cursor: Cursor | null, behind: number, live: PeerLiveState | null, now: number): SyncPeerView {
  const waiting = address !== null && live?.nextAttemptAt != null && live.nextAttemptAt > now;
  const state: SyncPeerView['state'] =
    peer.forgottenAt !== null ? 'forgotten' : live?.connected != null ? 'connected' : live?.dialling === true ? 'connecting' : waiting ? 'waiting' : 'idle';
  return {
    brain_id: peer.brainId,
    name: peer.name,
    device_id: peer.deviceId,
    url: address?.url ?? null,
    source: address?.source ?? 'paired',
    state,
    direction: live?.connected ?? null,
    paired_at: peer.pairedAt,
    last_synced_at: peer.lastSyncedAt,
    next_attempt_at: state === 'waiting' ? (live?.nextAttemptAt ?? null) : null,
    last_failure: live?.lastFailure ?? null,
    ops_behind: behind,
    cursor,
  };
}

export class SyncPeers implements PeerDirectory {
  private readonly byId = new Map<string, PeerRecord>();
  /** When each peer's last_synced_at was last written. */
  private readonly written = new Map<string, number>();

  /** `store.migrate(SYNC_PEERS_COMPONENT, SYNC_PEERS_MIGRATIONS)` must have run. */
  constructor(private readonly store: Store) {
    for (const row of store.all<Row>('SELECT * FROM sync_pinned')) this.byId.set(row.brain_id, fromRow(row));
  }

  /** The handshake's view: a forgotten peer is `revoked` (its hello is refused as such). */
  peer(brainId: string): PinnedPeer | undefined {
    const p = this.byId.get(brainId);
    return p === undefined ? undefined : { brainId: p.brainId, publicKey: p.publicKey, revoked: p.forgottenAt !== null };
  }

  get(brainId: string): PeerRecord | undefined {
    return this.byId.get(brainId);
  }

  /** Every peer, forgotten ones too, oldest pairing first. */
  list(): PeerRecord[] {
    return [...this.byId.values()].sort((a, b) => a.pairedAt - b.pairedAt || a.brainId.localeCompare(b.brainId));
  }

  /** The peers that may sync now. */
  active(): PeerRecord[] {
    return this.list().filter((p) => p.forgottenAt === null);
  }

  byDevice(deviceId: string): PeerRecord | undefined {
    for (const p of this.byId.values()) if (p.deviceId === deviceId) return p;
    return undefined;
  }

  /**
   * Pins a peer (pairing again replaces the key, the name and the URL, and brings a forgotten peer back;
   * the last sync time is kept).
   */
  async pin(peer: { brainId: string; publicKey: string; name: string; deviceId: string | null; url: string | null }, at: number): Promise<PeerRecord> {
    const lastSyncedAt = this.byId.get(peer.brainId)?.lastSyncedAt ?? null;
    await this.store.write((db) =>
      db.run(
        `INSERT INTO sync_pinned (brain_id, public_key, name, device_id, url, paired_at, forgotten_at, last_synced_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?)
         ON CONFLICT (brain_id) DO UPDATE SET public_key = excluded.public_key, name = excluded.name, device_id = excluded.device_id, url = excluded.url,
           paired_at = excluded.paired_at, forgotten_at = NULL`,
        [peer.brainId, peer.publicKey, peer.name, peer.deviceId, peer.url, at, lastSyncedAt],
      ),
    );
    const record: PeerRecord = { ...peer, pairedAt: at, forgottenAt: null, lastSyncedAt };
    this.byId.set(peer.brainId, record);
    return record;
  }

  /** Forgets a peer: its hello is refused from now on. False when it is unknown or already forgotten. */
  async forget(brainId: string, at: number): Promise<boolean> {
    const p = this.byId.get(brainId);
    if (p === undefined || p.forgottenAt !== null) return false;
    await this.store.write((db) => db.run('UPDATE sync_pinned SET forgotten_at = ? WHERE brain_id = ?', [at, brainId]));
    this.byId.set(brainId, { ...p, forgottenAt: at });
    return true;
  }

  /** Records a sync with the peer (a session established, or a batch applied); written at most once per `everyMs`. */
  async synced(brainId: string, at: number, everyMs = 60_000): Promise<void> {
    const p = this.byId.get(brainId);
    if (p === undefined) return;
    this.byId.set(brainId, { ...p, lastSyncedAt: at });
    const last = this.written.get(brainId);
    if (last !== undefined && at - last < everyMs) return;
    this.written.set(brainId, at);
    await this.store.write((db) => db.run('UPDATE sync_pinned SET last_synced_at = ? WHERE brain_id = ?', [at, brainId]));
  }
}
