// The sync capability (issue 15; spec 1.3, 4.12–4.14, 6.6; docs/sync.md): this brain's notes,
// episodes and facts, synced with the brains it paired with over /sync. It gives the core its memory
// journal (every change becomes an op in the change's own transaction), answers and dials /sync
// links (sync-links.ts), pairs brains (sync-pairing.ts), finds peers' addresses in settings, in
// pairing and over mDNS (`_svc-sync._tcp`), and keeps the three svc_sync_* metrics. With sync off
// (SVC_SYNC_DISABLED=1 or settings sync.enabled false) it journals nothing, mounts no /sync, and its
// metrics stay at zero, so SyncPeerDown never fires for a brain that is single-node on purpose.
import { loadBrainId } from '../../mesh/brain-id';
import { browseMdns, type MdnsBrowse } from '../../mesh/mdns';
import type { Cursor } from '../../protocol/sync-link';
import type { SyncPeerView, SyncStatus } from '../../protocol/sync-api';
import { keyFingerprint } from '../../sync/identity-keys';
import { loadSyncIdentity } from '../../sync/identity-key-file';
import { defineCapability, type CapabilityContext } from '../kernel/capability';
import type { MemoryJournal } from '../kernel/ports';
import { AppError } from '../kernel/errors';
import { backfillOps } from './backfill';
import { COLLECT_EVERY_MS, PeerCursors } from './peer-cursors';
import { readCursor } from './op-log';
import { createSyncData, type SyncDataLayer } from './sync-data';
import { syncMemoryRoutes } from './sync-memory-routes';
import { SyncMetrics } from './sync-metrics';
import type { SyncPairingDeps } from './sync-pairing';
import { peerView, SYNC_PEERS_COMPONENT, SYNC_PEERS_MIGRATIONS, SyncPeers, syncUrlOf, type PeerRecord } from './sync-peers';
import type { PeerAddress, SyncLinks } from './sync-links';
import { syncOff, syncRoutes, syncSocketRoute, type SyncService } from './sync-routes';
import { SyncSettings } from './sync-settings';

export const SYNC = 'sync';

/** What status says when sync is off: the environment variable and the setting both end here. */
export const SYNC_OFF_REASON = 'SVC_SYNC_DISABLED=1 or settings sync.enabled=false';

export const syncCapability = defineCapability({
  name: SYNC,
  settings: SyncSettings,
  create: (context, settings) => {
    const metrics = new SyncMetrics(context.metrics, SYNC);
    if (!settings.enabled) return { routes: [syncRoutes(offService(context))] };

    const brainId = loadBrainId(context.home);
    const identity = loadSyncIdentity(context.home, brainId);
    context.store.migrate(SYNC_PEERS_COMPONENT, SYNC_PEERS_MIGRATIONS);
    const peers = new SyncPeers(context.store);
    const now = (): number => context.clock.now();
    const layer = createSyncData({ store: context.store, brain: brainId, replica: context.core.memoryReplica, physical: now });
    const statics = new Map(settings.peers.map((p) => [p.brain_id, p.url]));
    const found = new Map<string, string>();
    const address = (peer: PeerRecord): PeerAddress | null => {
      const fixed = statics.get(peer.brainId);
      if (fixed !== undefined) return { url: fixed, source: 'static' };
      const seen = found.get(peer.brainId);
      if (seen !== undefined) return { url: seen, source: 'mdns' };
      return peer.url === null ? null : { url: peer.url, source: 'paired' };
    };
    const cursors = new PeerCursors(context.store);
    // The link layer (sessions, handshake, WebSockets) is loaded and started only once there is a peer
    // to sync with — at start when one is paired, else when one pairs or dials in — so a brain that
    // has no peer (or has sync off) never pays for it.
    let links: SyncLinks | null = null;
    let loaded: Promise<SyncLinks> | null = null;
    const loadLinks = (): Promise<SyncLinks> =>
      (loaded ??= import('./sync-links').then(({ SyncLinks: Links }) => (links = new Links({ identity, peers, data: layer.data, now, logger: context.logger, metrics, address, cursors }))));
    const collect = (): void => {
      void cursors
        .collect(peers.active().map((p) => p.brainId))
        .then((n) => n > 0 && context.logger.info({ tombstones: n }, 'sync: tombstones every peer holds were collected'))
        .catch((err: unknown) => context.logger.error({ err }, 'sync: collecting tombstones failed'));
    };

    // Every journaled change tells the links, once its transaction is over (setImmediate runs after the
    // commit; a rolled-back change just finds nothing new to send). Not the memory_changed events:
    // some changes emit none (an episode too short to search) and they must sync all the same.
    let told = false;
    const journal: MemoryJournal = {
      record: (db, entry) => {
        layer.journal.record(db, entry);
        if (told) return;
        told = true;
        setImmediate(() => {
          told = false;
          links?.notify();
        });
      },
    };

    // Where other devices reach this brain, for a peer completing pairing to dial back.
    let reachable: string[] = [];
    let mdns: MdnsBrowse | null = null;
    let starting: Promise<void> | null = null;
    /** `starting` once it has ended, a failure logged: what stop() waits for. */
    let startEnded: Promise<void> = Promise.resolve();
    let stopped = false;
    let collector: NodeJS.Timeout | undefined;
    // Records a crash left between the op log's commit and the tier tables' are written first, then
    // records from before the op log existed become ops, then the links start: a peer's batch is
    // applied only after both. In the background of whoever asked (the part's start, a pairing).
    const start = async (): Promise<void> => {
      const ready = await loadLinks();
      await layer.applier.flush();
      const filled = await backfillOps(context.store, layer.log);
      if (filled.notes + filled.episodes + filled.triples + filled.skipped > 0) {
        context.logger[filled.skipped > 0 ? 'warn' : 'info'](filled, 'sync: records from before the op log became ops (skipped: ops a peer would refuse)');
      }
      if (stopped) return;
      ready.start();
      collect();
      collector = setInterval(collect, COLLECT_EVERY_MS);
      collector.unref();
      mdns = await browsePeers(context, peers, statics, found);
    };
    const ensureStarted = (): Promise<void> => {
      if (starting === null) {
        starting = start();
        startEnded = starting.catch((err: unknown) => context.logger.error({ err }, 'sync did not start: the op log could not be brought up to date; this brain does not sync until it restarts'));
      }
      return starting;
    };
    const viewOf = (p: PeerRecord): SyncPeerView => {
      if (links !== null) return links.view(p, (cursor) => behind(context, cursor));
      const cursor = cursors.get(p.brainId);
      return peerView(p, address(p), cursor, behind(context, cursor), null, now());
    };
    context.bus.on(SYNC, (event) => {
      switch (event.type) {
        case 'access_mode':
          reachable = event.urls.map(syncUrlOf);
          return;
        case 'device_revoked':
          // `svc pair revoke dev_…` of a peer brain's pairing forgets the peer too.
          if (event.kind === 'brain') void forgetByDevice(event.deviceId);
          return;
        default:
          return;
      }
    });
    const forgetByDevice = async (deviceId: string): Promise<void> => {
      const peer = peers.byDevice(deviceId);
      if (peer === undefined) return;
      if (!(await peers.forget(peer.brainId, now()))) return;
      links?.forgotten(peer.brainId);
      context.logger.info({ peer: peer.brainId, device_id: deviceId }, 'peer brain forgotten: its pairing was revoked');
    };

    const pairing: SyncPairingDeps = { identity, peers, claims: context.core.pairing, now, logger: context.logger, ownSyncUrls: () => reachable };
    const service: SyncService = {
      status: async () => status(context, layer, links, metrics, peers, { brainId, fingerprint: keyFingerprint(identity.publicKey) }),
      peers: async () => peers.list().map((p) => viewOf(p)),
      pair: async (body) => {
        const { completePairing } = await import('./sync-pairing');
        const record = await completePairing(pairing, body);
        // The links dial every active peer on their next tick (each second), this one too.
        void ensureStarted();
        return viewOf(record);
      },
      accept: async (body, remote) => {
        const answer = await (await import('./sync-pairing')).acceptPairing(pairing, body, remote);
        void ensureStarted();
        return answer;
      },
      now: async (body) => {
        const targets = body.peer === undefined ? peers.active() : [peers.get(body.peer)].filter((p): p is PeerRecord => p !== undefined && p.forgottenAt === null);
        if (body.peer !== undefined && targets.length === 0) throw new AppError('NOT_FOUND', `peer ${body.peer} is not paired`, { brain_id: body.peer });
        const [{ waitForSync }] = await Promise.all([import('./sync-now'), ensureStarted()]);
        const ready = await loadLinks();
        return waitForSync({ links: ready, peers: targets, address, cursor: () => layer.applier.cursor(), timeoutMs: body.timeout_ms ?? 15_000, now });
      },
      forget: async (id) => {
        const peer = peers.get(id);
        if (peer === undefined || !(await peers.forget(id, now()))) return false;
        links?.forgotten(id);
        if (peer.deviceId !== null) await context.core.pairing.revoke(peer.deviceId);
        context.logger.info({ peer: id }, 'peer brain forgotten');
        return true;
      },
    };

    return {
      memoryJournal: journal,
      parts: [
        {
          name: 'links',
          // With a peer paired, sync starts in the background (a big memory's backfill does not hold
          // up listening); with none, nothing is loaded until one pairs or dials in.
          start: () => {
            if (peers.active().length > 0) void ensureStarted();
          },
          stop: async () => {
            stopped = true;
            clearInterval(collector);
            await startEnded;
            await mdns?.stop();
            await links?.stop();
          },
        },
      ],
      routes: [syncRoutes(service), syncMemoryRoutes(context.store)],
      // Until the links are loaded and started, a peer is told to come back (503), and they start.
      sockets: [
        syncSocketRoute((header, remote) => {
          if (links !== null) return links.upgrade(header, remote);
          void ensureStarted();
          return { ok: false, status: 503, code: 'io', message: 'sync is starting' };
        }),
      ],
    };
  },
});

/** Browses `_svc-sync._tcp` for the paired peers that have no static address (bonjour is loaded only then). */
async function browsePeers(context: CapabilityContext, peers: SyncPeers, statics: ReadonlyMap<string, string>, found: Map<string, string>): Promise<MdnsBrowse | null> {
  if (!peers.active().some((p) => !statics.has(p.brainId))) return null;
  return browseMdns({
    log: context.logger,
    kinds: ['sync'],
    onUp: (service) => {
      if (service.brainId === null || peers.get(service.brainId) === undefined) return;
      const url = `${service.tls ? 'wss' : 'ws'}://${new URL(service.baseUrl).host}${service.path}`;
      if (found.get(service.brainId) !== url) context.logger.info({ peer: service.brainId, url }, 'sync peer found over mDNS');
      found.set(service.brainId, url);
    },
  });
}

/** Ops this brain holds that `cursor` lacks (by each origin's count). */
function behind(context: CapabilityContext, cursor: Cursor | null): number {
  const mine = readCursor(context.store);
  let n = 0;
  for (const [origin, through] of Object.entries(mine)) n += Math.max(0, through - (cursor?.[origin] ?? 0));
  return n;
}

async function status(context: CapabilityContext, layer: SyncDataLayer, links: SyncLinks | null, metrics: SyncMetrics, peers: SyncPeers, me: { brainId: string; fingerprint: string }): Promise<SyncStatus> {
  const cursor = await layer.applier.cursor();
  const at = context.clock.now();
  const lastSynced = peers.list().reduce<number | null>((max, p) => (p.lastSyncedAt !== null && (max === null || p.lastSyncedAt > max) ? p.lastSyncedAt : max), null);
  return {
    enabled: true,
    disabled_by: null,
    brain_id: me.brainId,
    key_fingerprint: me.fingerprint,
    active_peers: links?.activePeers() ?? 0,
    was_active_recent: metrics.wasActiveRecent(at),
    peers: peers.active().length,
    last_synced_at: lastSynced,
    ops: { local: cursor[me.brainId] ?? 0, total: Object.values(cursor).reduce((a, b) => a + b, 0) },
    cursor,
    failures: metrics.failures(),
  };
}

/** A brain that is single-node on purpose: status says so, peers are none, the rest is a 409. */
function offService(context: CapabilityContext): SyncService {
  const off = (): Promise<never> => Promise.reject(syncOff(SYNC_OFF_REASON));
  return {
    status: async () => ({
      enabled: false,
      disabled_by: SYNC_OFF_REASON,
      brain_id: loadBrainId(context.home),
      key_fingerprint: null,
      active_peers: 0,
      was_active_recent: false,
      peers: 0,
      last_synced_at: null,
      ops: { local: 0, total: 0 },
      cursor: {},
      failures: {},
    }),
    peers: async () => [],
    pair: off,
    accept: off,
    now: off,
    forget: off,
  };
}
