// The sync data layer assembled on one brain's store: the op log, the journal memory writes to, the
// applier of peers' batches and the SyncData a /sync session (sync/session-stream.ts) draws on.
import type { SyncData } from '../../sync/session-stream';
import type { MemoryReplicaPort } from '../kernel/ports';
import type { Store } from '../kernel/capability';
import { RemoteApplier } from './apply-remote';
import { OpLogJournal } from './journal-to-ops';
import { OpLog, SYNC_MIGRATIONS } from './op-log';
import { outboundOps } from './outbound';

export interface SyncDataLayer {
  log: OpLog;
  /** Hand to the core's MemoryJournalSlot (the capability's `memoryJournal`). */
  journal: OpLogJournal;
  applier: RemoteApplier;
  /** What every session with a peer draws on. */
  data: SyncData;
}

export interface SyncDataDeps {
  store: Store;
  /** This brain's id (mesh/brain-id.ts). */
  brain: string;
  /** The memory's replica port (core.memoryReplica). */
  replica: MemoryReplicaPort;
  /** Physical time in ms (an offset clock in tests). */
  physical: () => number;
  /** How far ahead of the physical clock a peer's stamp may be; one day by default. */
  maxSkewMs?: number;
}

/**
 * Migrates the `sync` tables and builds the layer. Call `applier.flush()` once at start: it writes the
 * records a crash left between the op log's commit and the tier tables'.
 */
export function createSyncData(deps: SyncDataDeps): SyncDataLayer {
  deps.store.migrate('sync', SYNC_MIGRATIONS);
  const log = new OpLog(deps.store, deps.brain, deps.physical, deps.maxSkewMs);
  const applier = new RemoteApplier(deps.store, log, deps.replica);
  const data: SyncData = {
    cursor: () => applier.cursor(),
    ops: (since, maxBytes) => outboundOps(deps.store, since, maxBytes),
    apply: (ops, peer) => applier.apply(ops, peer),
  };
  return { log, journal: new OpLogJournal(log), applier, data };
}
