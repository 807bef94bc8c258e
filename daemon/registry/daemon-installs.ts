// The brain's published daemons (docs/registry.md "Installing a daemon"): POST /api/daemons/install
// fetches a tarball from a registry, checks its sha256 and detached signature against the publisher keys
// the brain pins (vault namespace publisher_keys, spec 5.1), reads its daemon manifest and extracts it
// with signing/archive.ts into <home>/daemons/<node_id>/<version>/. The table installed_daemons
// (migrated by the capability) records which version is installed for which node_id: the node-agent
// that registers with that node_id is the one meant to run it: it fetches the bundle through
// /api/daemons/mine (daemon-delivery.ts) and runs it as a driver (docs/registry.md).
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock, SecretStore, Store } from '../kernel/capability';
import { AppError, UnverifiedManifestError } from '../kernel/errors';
import type { DaemonInstallBody, InstalledDaemon } from '../../protocol/registry';
import { PUBLISHER_KEYS_NAMESPACE } from '../../protocol/publishers';
import { extractArchive, type ArchiveLimits } from '../../signing/archive';
import { sha256Hex, verifyArtifact } from '../../signing/detached';
import { checkDaemonFiles, readFiles } from './bundle-check';

/** How the tarball is fetched: `fetch` (injectable for tests), a time bound and the archive limits (its size bound too). */
export interface DaemonFetch {
  readonly fetch: typeof globalThis.fetch;
  readonly timeoutMs: number;
  readonly limits: ArchiveLimits;
}

export class DaemonInstalls {
  constructor(
    private readonly store: Store,
    private readonly home: string,
    private readonly vault: Pick<SecretStore, 'get'>,
    private readonly clock: Clock,
    private readonly fetching: DaemonFetch,
  ) {}

  list(): InstalledDaemon[] {
    return this.store.all<InstalledDaemon>('SELECT * FROM installed_daemons ORDER BY node_id');
  }

  async install(body: DaemonInstallBody): Promise<InstalledDaemon> {
    const bytes = await this.download(body.url);
    // Trust refusals answer like a skill's or an app's (spec 7): 422 {error: "UnverifiedManifest", reason, message}.
    if (sha256Hex(bytes) !== body.sha256) throw new UnverifiedManifestError('digest_mismatch', `${body.url} is not the archive whose sha256 was given`);
    const verdict = verifyArtifact(bytes, body.signature, (id) => this.vault.get(PUBLISHER_KEYS_NAMESPACE, id));
    if (!verdict.ok && verdict.reason === 'unknown_key') {
      throw new UnverifiedManifestError(verdict.reason, `${verdict.detail}: the brain installs only what a publisher it pins has signed (svc publisher trust <key_id> <public_key>)`);
    }
    if (!verdict.ok) throw new UnverifiedManifestError(verdict.reason, `the downloaded daemon is refused: ${verdict.detail}`);
    const { manifest, name, version, displayName } = checkDaemonFiles(await readFiles(bytes, this.fetching.limits));
    const path = join(this.home, 'daemons', name, version);
    const existing = this.store.get<InstalledDaemon>('SELECT * FROM installed_daemons WHERE node_id = ?', [name]);
    if (existing?.version === version && existing.sha256 === verdict.sha256 && existsSync(path)) return existing;
    rmSync(path, { recursive: true, force: true }); // a version left by an install that failed before its record
    await extractArchive(bytes, path, this.fetching.limits);
    const record: InstalledDaemon = { node_id: name, version, entry: manifest.entry, display_name: displayName, sha256: verdict.sha256, key_id: verdict.keyId, source: body.url, installed_at: new Date(this.clock.now()).toISOString(), path };
    await this.store.write((db) =>
      db.run('INSERT OR REPLACE INTO installed_daemons (node_id, version, entry, display_name, sha256, key_id, source, installed_at, path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
        record.node_id,
        record.version,
        record.entry,
        record.display_name,
        record.sha256,
        record.key_id,
        record.source,
        record.installed_at,
        record.path,
      ]),
    );
    return record;
  }

  /** The tarball at `url` (http or https, no redirects), refused past the archive size bound. */
  private async download(url: string): Promise<Uint8Array> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch (err) {
      if (err instanceof TypeError) throw new AppError('BAD_REQUEST', `url ${JSON.stringify(url)} is not a URL`, { field: 'url' });
      throw err;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new AppError('BAD_REQUEST', `url: only http and https are fetched, not ${parsed.protocol}`, { field: 'url' });
    let res: Response;
    try {
      res = await this.fetching.fetch(parsed, { redirect: 'error', signal: AbortSignal.timeout(this.fetching.timeoutMs) });
    } catch (err) {
      throw new AppError('REGISTRY_UNREACHABLE', `cannot fetch ${url}: ${err instanceof Error ? err.message : String(err)}`, { url }, 502);
    }
    if (!res.ok) throw new AppError('REGISTRY_UNREACHABLE', `${url} answered HTTP ${res.status}`, { url, status: res.status }, 502);
    return readBounded(res, this.fetching.limits.maxTotalBytes, url);
  }
}

async function readBounded(res: Response, max: number, url: string): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (res.body === null) return new Uint8Array();
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > max) throw new AppError('PAYLOAD_TOO_LARGE', `${url} is larger than ${max} bytes`, { url });
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks));
}
