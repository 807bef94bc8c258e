// Delivering installed daemons to their node-agents (docs/registry.md "Delivering daemons to
// node-agents"; protocol/daemons.ts). The brain keeps an installed daemon as an extracted folder
// (<home>/daemons/<node_id>/<version>/, daemon-installs.ts), not as the tarball it downloaded, so what
// a node fetches is that folder packed again with signing/archive.ts packArchive: deterministic, so
// the same files always give the same bytes. A publisher who packed with svc publish (packArchive too)
// gets the very bytes that were signed; any other packer gets a bundle of the same files.
//
// The offer's sha256 is computed once per installed record and kept in memory (a node asks every ten
// minutes; a Pi should not re-pack and hash every time). The bundle is packed afresh on each download:
// when the folder changed on disk since (a damaged SD card, a hand edit), the node sees the digest
// differ and refuses it, which is the check's purpose. Reports from the nodes go to the table
// daemon_reports (component daemon-delivery), one row per node: the latest.
import type { Clock, Migration, Store } from '../kernel/capability';
import { AppError } from '../kernel/errors';
import type { DaemonDelivery, DaemonOffer, DaemonReport, DaemonStatusBody } from '../../protocol/daemons';
import type { InstalledDaemon } from '../../protocol/registry';

export const DELIVERY_COMPONENT = 'daemon-delivery';
export const DELIVERY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "each node's latest report about its daemon (installed, running or failed)",
    up: `
      CREATE TABLE daemon_reports (
        node_id TEXT PRIMARY KEY,
        version TEXT NOT NULL,
        state TEXT NOT NULL,
        error TEXT,
        reported_at TEXT NOT NULL
      );
    `,
  },
];

/** Packs an installed daemon's folder (daemon-delivery-bundle.ts, loaded on first use). */
export type BundlePacker = (path: string) => Promise<Uint8Array>;

interface Digest {
  readonly stamp: string;
  readonly sha256: string;
  readonly size: number;
}

const stampOf = (d: InstalledDaemon): string => `${d.version}\0${d.sha256}\0${d.installed_at}\0${d.path}`;

export class DaemonDeliveries {
  private readonly digests = new Map<string, Digest>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly pack: BundlePacker,
    private readonly sha256: (bytes: Uint8Array) => string,
  ) {}

  /** The daemon installed for `nodeId`, or null. */
  async offer(nodeId: string): Promise<DaemonOffer | null> {
    const installed = this.installed(nodeId);
    if (installed === undefined) return null;
    const digest = await this.digest(installed);
    return { node_id: installed.node_id, version: installed.version, entry: installed.entry, display_name: installed.display_name, sha256: digest.sha256, size: digest.size };
  }

  /** The bundle of the daemon installed for `nodeId`, packed now; 404 when there is none. */
  async bundle(nodeId: string): Promise<{ bytes: Uint8Array; version: string }> {
    const installed = this.mustBeInstalled(nodeId);
    return { bytes: await this.packed(installed), version: installed.version };
  }

  /** Records what the node reports; 404 when no daemon is installed for it (nothing to report about). */
  async report(nodeId: string, body: DaemonStatusBody): Promise<DaemonReport> {
    this.mustBeInstalled(nodeId);
    const row: DaemonReport = { node_id: nodeId, version: body.version, state: body.state, error: body.state === 'failed' ? (body.error ?? 'no reason given') : null, reported_at: new Date(this.clock.now()).toISOString() };
    await this.store.write((db) =>
      db.run('INSERT OR REPLACE INTO daemon_reports (node_id, version, state, error, reported_at) VALUES (?, ?, ?, ?, ?)', [row.node_id, row.version, row.state, row.error, row.reported_at]),
    );
    return row;
  }

  /** Every installed daemon with its node's report about it (admin). */
  deliveries(): DaemonDelivery[] {
    const reports = new Map(this.store.all<DaemonReport>('SELECT * FROM daemon_reports').map((r) => [r.node_id, r]));
    return this.store.all<InstalledDaemon>('SELECT * FROM installed_daemons ORDER BY node_id').map((d) => {
      const report = reports.get(d.node_id) ?? null;
      const current = report !== null && report.version === d.version;
      return { node_id: d.node_id, version: d.version, state: current ? report.state : 'pending', error: current ? report.error : null, last_report: report };
    });
  }

  private installed(nodeId: string): InstalledDaemon | undefined {
    return this.store.get<InstalledDaemon>('SELECT * FROM installed_daemons WHERE node_id = ?', [nodeId]);
  }

  private mustBeInstalled(nodeId: string): InstalledDaemon {
    const installed = this.installed(nodeId);
    if (installed === undefined) throw new AppError('NOT_FOUND', `no daemon is installed for node ${JSON.stringify(nodeId)}`, { node_id: nodeId });
    return installed;
  }

  private async digest(installed: InstalledDaemon): Promise<Digest> {
    const stamp = stampOf(installed);
    const known = this.digests.get(installed.node_id);
    if (known?.stamp === stamp) return known;
    const bytes = await this.packed(installed);
    const digest = { stamp, sha256: this.sha256(bytes), size: bytes.length };
    this.digests.set(installed.node_id, digest);
    return digest;
  }

  private async packed(installed: InstalledDaemon): Promise<Uint8Array> {
    try {
      return await this.pack(installed.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw new AppError('NOT_FOUND', `the files of daemon ${installed.node_id} ${installed.version} are gone from ${installed.path}; install it again`, { node_id: installed.node_id, reason: 'files_missing' });
    }
  }
}
