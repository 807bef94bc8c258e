// Bundles and publish bodies for the registry's tests: publisher keys made in memory, a skill archive
// signed the way `svc publish --skill` signs it (manifest files digests, manifest.signed.json, detached
// signature), a daemon archive, and a registry on a temporary store.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Header, type HeaderData } from 'tar';
import type { PublishBody } from '../../protocol/registry';
import { DEFAULT_ARCHIVE_LIMITS, packArchive, type ArchiveFile } from '../../signing/archive';
import { sha256Hex, signArtifact } from '../../signing/detached';
import { keyIdOf, rawPublicKey } from '../../signing/ed25519';
import type { PublisherKey } from '../../signing/publisher-key';
import { SIGNED_MANIFEST_FILE, signManifest } from '../../signing/signed-manifest';
import { SqliteStore } from '../../daemon/store/sqlite-store';
import { REGISTRY_COMPONENT, REGISTRY_MIGRATIONS, RegistryService, type RegistryLimits } from '../../daemon/registry/registry-service';

export function publisherKey(): PublisherKey {
  const { privateKey } = generateKeyPairSync('ed25519');
  const publicKey = rawPublicKey(privateKey);
  return { keyId: keyIdOf(publicKey), publicKey, privateKey };
}

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

export const SKILL_SOURCE = 'export default function run() { return { ok: true }; }\n';

/** A skill manifest with its files' digests, as `svc publish --skill` sends it. */
export function skillManifest(id: string, version: string, source = SKILL_SOURCE): Record<string, unknown> {
  return {
    id,
    name: `Skill ${id}`,
    version,
    description: `What ${id} does`,
    entry: 'main.js',
    params: { type: 'object' },
    permissions: { network: { allow: [] }, tools: [] },
    triggers: [{ type: 'manual' }],
    files: { 'main.js': sha256Hex(text(source)) },
  };
}

/** The archive files of a signed skill; `edit` changes them before packing (a hostile bundle). */
export function skillFiles(key: PublisherKey, id: string, version: string, source = SKILL_SOURCE): ArchiveFile[] {
  const manifest = skillManifest(id, version, source);
  return [
    { path: 'manifest.json', bytes: text(`${JSON.stringify(manifest, null, 2)}\n`) },
    { path: SIGNED_MANIFEST_FILE, bytes: text(JSON.stringify(signManifest(manifest, key))) },
    { path: 'main.js', bytes: text(source) },
  ];
}

export function daemonFiles(nodeId: string, version: string, brand = 'Garden pump'): ArchiveFile[] {
  return [
    { path: 'manifest.json', bytes: text(JSON.stringify({ node_id: nodeId, version, entry: 'bin/daemon.js', brand: { name: brand }, description: 'Waters the garden' })) },
    { path: 'bin/daemon.js', bytes: text('console.log("pump");\n') },
  ];
}

/** A publish body of `archive` signed by `key`. */
export function publishBody(kind: 'skill' | 'daemon', archive: Uint8Array, key: PublisherKey): PublishBody {
  return { kind, archive: Buffer.from(archive).toString('base64'), signature: signArtifact(archive, key), public_key: key.publicKey };
}

export const skillBody = (key: PublisherKey, id: string, version: string): PublishBody => publishBody('skill', packArchive(skillFiles(key, id, version)), key);
export const daemonBody = (key: PublisherKey, nodeId: string, version: string): PublishBody => publishBody('daemon', packArchive(daemonFiles(nodeId, version)), key);

export const TEST_LIMITS: RegistryLimits = { archive: { ...DEFAULT_ARCHIVE_LIMITS, maxTotalBytes: 1024 * 1024, maxEntryBytes: 512 * 1024 }, maxPendingPerKey: 5, maxPending: 50 };

/** A registry on a fresh directory with a store of its own; closed and removed after the test. */
export function tempRegistry(t: { after(fn: () => void): void }, limits: RegistryLimits = TEST_LIMITS, now: () => number = Date.now): { registry: RegistryService; dir: string; store: SqliteStore } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-registry-'));
  const store = new SqliteStore(join(dir, 'registry.db'));
  store.migrate(REGISTRY_COMPONENT, REGISTRY_MIGRATIONS);
  const registry = new RegistryService(store, dir, { now }, limits);
  registry.start();
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { registry, dir, store };
}

/** A gzipped tar written from raw headers, as a hostile packer would (no checks): `../x`, links, devices. */
export function hostileTar(entries: readonly (HeaderData & { body?: Uint8Array })[]): Uint8Array {
  const blocks: Buffer[] = [];
  for (const { body, ...data } of entries) {
    const block = Buffer.alloc(512);
    new Header({ mode: 0o644, mtime: new Date(0), size: body?.length ?? 0, ...data }).encode(block, 0);
    blocks.push(block);
    if (body) blocks.push(Buffer.from(body), Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}
