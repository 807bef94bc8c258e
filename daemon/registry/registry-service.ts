// The registry's items (docs/registry.md): publishes, the public listing, item details, downloads, the
// reviewers' queue, reviews and withdrawals. Rows live in a Store under the component `registry` (the
// brain's brain.db, or registry.db in the directory of `svc registry serve`); tarballs are files named
// by their sha256 under `<dir>/blobs/`, written atomically before the row that names them. Every state
// change is decided by item-states.ts; this file loads an item, applies the event and stores the diff.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock, Db, Migration, Store } from '../kernel/capability';
import { AppError, notFound } from '../kernel/errors';
import { writeFileAtomic } from '../fs/atomic-write';
import { REGISTRY_PREFIX, type ItemDetail, type ItemKind, type ItemSummary, type PublishBody, type PublishResult, type Submission, type VersionState, type VersionView, type WithdrawBody } from '../../protocol/registry';
import { SIGNING_ALG } from '../../protocol/signing';
import type { ArchiveLimits } from '../../signing/archive';
import { publicKeyOf, verifyMessage } from '../../signing/ed25519';
import { checkBundle } from './bundle-check';
import { compareSemver, isDownloadable, transition, visibilityOf, type ItemEvent, type ItemRecord } from './item-states';

export const REGISTRY_COMPONENT = 'registry';

export const REGISTRY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'registry items and their versions',
    up: `
      CREATE TABLE registry_items (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        name TEXT NOT NULL UNIQUE,
        owner_key_id TEXT,
        created_at TEXT NOT NULL
      );
      CREATE TABLE registry_versions (
        submission_id TEXT PRIMARY KEY,
        item_id TEXT NOT NULL REFERENCES registry_items (id),
        version TEXT NOT NULL,
        state TEXT NOT NULL,
        reason TEXT,
        key_id TEXT NOT NULL,
        public_key TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        sig TEXT NOT NULL,
        size INTEGER NOT NULL,
        manifest TEXT NOT NULL,
        display_name TEXT NOT NULL,
        description TEXT NOT NULL,
        submitted_at TEXT NOT NULL,
        reviewed_at TEXT,
        UNIQUE (item_id, version)
      );
      CREATE INDEX registry_versions_by_state ON registry_versions (state);
    `,
  },
];

/** The context line of a withdrawal signature (docs/registry.md "Withdrawing"). */
export const WITHDRAW_CONTEXT = 'svc-registry-withdraw-v1';
export const withdrawMessage = (itemId: string, version: string): string => `${WITHDRAW_CONTEXT}\n${itemId}\n${version}`;

export interface RegistryLimits {
  readonly archive: ArchiveLimits;
  /** Submissions waiting for review from one key; past it a publish is 429. */
  readonly maxPendingPerKey: number;
  /** Submissions waiting for review in all. */
  readonly maxPending: number;
}

interface ItemRow {
  id: string;
  kind: ItemKind;
  name: string;
  owner_key_id: string | null;
  created_at: string;
}

interface VersionRow {
  submission_id: string;
  item_id: string;
  version: string;
  state: VersionState;
  reason: string | null;
  key_id: string;
  public_key: string;
  sha256: string;
  sig: string;
  size: number;
  manifest: string;
  display_name: string;
  description: string;
  submitted_at: string;
  reviewed_at: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class RegistryService {
  private readonly blobs: string;

  constructor(
    private readonly store: Store,
    dir: string,
    private readonly clock: Clock,
    private readonly limits: RegistryLimits,
  ) {
    this.blobs = join(dir, 'blobs');
  }

  /** Makes the blob directory; the tables are the migrations' (REGISTRY_MIGRATIONS). */
  start(): void {
    mkdirSync(this.blobs, { recursive: true, mode: 0o700 });
  }

  // ── Publishing ─────────────────────────────────────────────────────────────────────────────────
  async publish(body: PublishBody): Promise<PublishResult> {
    const bundle = await checkBundle(body, this.limits.archive);
    this.checkPending(this.store, bundle.keyId);
    writeFileAtomic(this.blobPath(bundle.sha256), bundle.bytes, 0o600);
    const submissionId = randomUUID();
    // Decided inside the write, on what the store holds then: two publishes of one new name cannot both create it.
    const item = await this.store.write((db) => {
      this.checkPending(db, bundle.keyId);
      const found = itemByName(db, bundle.name);
      if (found && found.kind !== bundle.kind) throw new AppError('CONFLICT', `${bundle.name} is published as a ${found.kind}; a ${bundle.kind} needs another name`, { name: bundle.name, kind: found.kind });
      const target = found ?? { id: randomUUID(), kind: bundle.kind, name: bundle.name, owner_key_id: null, created_at: this.now() };
      const next = decide(db, target, { type: 'submit', version: bundle.version, keyId: bundle.keyId });
      if (!found) db.run('INSERT INTO registry_items (id, kind, name, owner_key_id, created_at) VALUES (?, ?, ?, NULL, ?)', [target.id, target.kind, target.name, target.created_at]);
      db.run('DELETE FROM registry_versions WHERE item_id = ? AND version = ?', [target.id, bundle.version]); // a rejected number submitted again
      insertVersion(db, {
        submission_id: submissionId,
        item_id: target.id,
        version: bundle.version,
        state: 'submitted',
        reason: null,
        key_id: bundle.keyId,
        public_key: body.public_key,
        sha256: bundle.sha256,
        sig: body.signature.sig,
        size: bundle.bytes.length,
        manifest: JSON.stringify(bundle.manifest),
        display_name: bundle.displayName,
        description: bundle.description,
        submitted_at: this.now(),
        reviewed_at: null,
      });
      saveStates(db, target.id, next, this.now(), null);
      return target;
    });
    return { id: item.id, kind: item.kind, name: item.name, version: bundle.version, submission_id: submissionId, state: 'submitted', visibility: 'private' };
  }

  /** Checked before the archive is stored (a full queue costs no disk) and again in the write that stores it. */
  private checkPending(db: Db, keyId: string): void {
    const pending = db.get<{ all: number; mine: number }>("SELECT count(*) AS \"all\", coalesce(sum(key_id = ?), 0) AS mine FROM registry_versions WHERE state = 'submitted'", [keyId]);
    if ((pending?.mine ?? 0) >= this.limits.maxPendingPerKey) throw new AppError('RATE_LIMITED', `key ${keyId} has ${pending?.mine} submissions waiting for review (at most ${this.limits.maxPendingPerKey})`);
    if ((pending?.all ?? 0) >= this.limits.maxPending) throw new AppError('RATE_LIMITED', `this registry has ${pending?.all} submissions waiting for review (at most ${this.limits.maxPending}); try again once they are reviewed`);
  }

  // ── Reading ────────────────────────────────────────────────────────────────────────────────────
  /** Items with a published version, by name; `q` matches name, display name and description (case-insensitive). */
  list(query: { q?: string | undefined; kind?: ItemKind | undefined; limit: number }): ItemSummary[] {
    const rows = this.store.all<ItemRow & VersionRow>(
      "SELECT i.id, i.kind, i.name, v.version, v.key_id, v.display_name, v.description FROM registry_items i JOIN registry_versions v ON v.item_id = i.id WHERE v.state = 'published' ORDER BY i.name",
    );
    const needle = query.q?.trim().toLowerCase() ?? '';
    return rows
      .filter((r) => query.kind === undefined || r.kind === query.kind)
      .filter((r) => needle === '' || [r.name, r.display_name, r.description].some((t) => t.toLowerCase().includes(needle)))
      .slice(0, query.limit)
      .map((r) => ({ id: r.id, kind: r.kind, name: r.name, display_name: r.display_name, description: r.description, version: r.version, key_id: r.key_id }));
  }

  /** An item by UUID or name with its public versions; an item still under review shows only its name, no version, and is not installable. */
  detail(ref: string): ItemDetail {
    const item = this.resolve(ref);
    const versions = versionsOf(this.store, item.id).filter((v) => isDownloadable(v.state));
    versions.sort((a, b) => compareSemver(b.version, a.version));
    const current = versions.find((v) => v.state === 'published');
    // A private submission says nothing of itself here: the name exists, nothing more (spec 3.3).
    const shown = current ?? versions[0];
    return {
      id: item.id,
      kind: item.kind,
      name: item.name,
      display_name: shown?.display_name ?? item.name,
      description: shown?.description ?? '',
      key_id: item.owner_key_id,
      installable: current !== undefined,
      current: current ? this.view(item, current) : null,
      versions: versions.map((v) => this.view(item, v)),
      manifest: current ? (JSON.parse(current.manifest) as Record<string, unknown>) : null,
    };
  }

  /** The tarball of the published version (or of `version`, when public), with what identifies it. */
  download(ref: string, version: string | undefined): { bytes: Buffer; view: VersionView } {
    const item = this.resolve(ref);
    const versions = versionsOf(this.store, item.id);
    const row = version === undefined ? versions.find((v) => v.state === 'published') : versions.find((v) => v.version === version);
    if (row === undefined) {
      if (version !== undefined) throw notFound('version', `${item.name}@${version}`);
      throw notReviewed(item, versions.some((v) => v.state === 'submitted') ? 'submitted' : 'none');
    }
    if (!isDownloadable(row.state)) throw notReviewed(item, row.state);
    return { bytes: readFileSync(this.blobPath(row.sha256)), view: this.view(item, row) };
  }

  /** The reviewers' queue: submissions in `state` (default submitted), oldest first. */
  submissions(state: VersionState = 'submitted'): Submission[] {
    const rows = this.store.all<VersionRow>('SELECT * FROM registry_versions WHERE state = ? ORDER BY submitted_at, submission_id', [state]);
    return rows.map((row) => {
      const item = this.store.get<ItemRow>('SELECT * FROM registry_items WHERE id = ?', [row.item_id])!;
      return {
        ...this.view(item, row),
        id: item.id,
        kind: item.kind,
        name: item.name,
        display_name: row.display_name,
        description: row.description,
        bound_key_id: item.owner_key_id,
        manifest: JSON.parse(row.manifest) as Record<string, unknown>,
      };
    });
  }

  // ── Reviewing and withdrawing ──────────────────────────────────────────────────────────────────
  /** Approves or rejects a waiting submission; `ref` is its submission id, or its item's UUID or name when that item has one waiting. */
  async review(ref: string, decision: 'approve' | 'reject', reason: string | undefined, reviewer: string): Promise<Submission> {
    const row = this.waitingSubmission(ref);
    const event: ItemEvent = decision === 'approve' ? { type: 'approve', version: row.version } : { type: 'reject', version: row.version, reason: reason ?? `rejected by ${reviewer}` };
    await this.store.write((db) => {
      const item = db.get<ItemRow>('SELECT * FROM registry_items WHERE id = ?', [row.item_id])!;
      saveStates(db, item.id, decide(db, item, event), this.now(), row.version);
    });
    return this.submissionView(row.submission_id);
  }

  /** The publisher takes a version back, proving it with the key that signed the version (WithdrawBody). */
  async withdraw(ref: string, body: WithdrawBody): Promise<VersionView> {
    const item = this.resolve(ref);
    const row = versionsOf(this.store, item.id).find((v) => v.version === body.version);
    if (row === undefined) throw notFound('version', `${item.name}@${body.version}`);
    const key = row.key_id === body.key_id ? publicKeyOf(row.public_key) : undefined;
    if (key === undefined || !verifyMessage(key, withdrawMessage(item.id, body.version), body.signature)) {
      throw new AppError('FORBIDDEN', `a withdrawal of ${item.name}@${body.version} is signed by the key that published it (${row.key_id}) over "${WITHDRAW_CONTEXT}\\n<item id>\\n<version>"`);
    }
    await this.store.write((db) => saveStates(db, item.id, decide(db, db.get<ItemRow>('SELECT * FROM registry_items WHERE id = ?', [item.id])!, { type: 'withdraw', version: body.version, keyId: body.key_id }), this.now(), null));
    return this.view(item, versionsOf(this.store, item.id).find((v) => v.version === body.version)!);
  }

  // ── Helpers ────────────────────────────────────────────────────────────────────────────────────
  private resolve(ref: string): ItemRow {
    const item = UUID.test(ref) ? this.store.get<ItemRow>('SELECT * FROM registry_items WHERE id = ?', [ref]) : itemByName(this.store, ref);
    if (item === undefined) throw notFound('item', ref);
    return item;
  }

  private waitingSubmission(ref: string): VersionRow {
    const bySubmission = UUID.test(ref) ? this.store.get<VersionRow>('SELECT * FROM registry_versions WHERE submission_id = ?', [ref]) : undefined;
    if (bySubmission) {
      if (bySubmission.state !== 'submitted') throw new AppError('CONFLICT', `submission ${ref} is ${bySubmission.state}; only a submitted version is reviewed`, { state: bySubmission.state });
      return bySubmission;
    }
    const item = this.resolve(ref);
    const waiting = versionsOf(this.store, item.id).filter((v) => v.state === 'submitted');
    if (waiting.length === 1) return waiting[0]!;
    if (waiting.length === 0) throw new AppError('CONFLICT', `${item.name} has no submission waiting for review`, { id: item.id });
    throw new AppError('CONFLICT', `${item.name} has ${waiting.length} submissions waiting (${waiting.map((w) => w.version).join(', ')}); name one by its submission id`, { submissions: waiting.map((w) => w.submission_id) });
  }

  private submissionView(submissionId: string): Submission {
    const row = this.store.get<VersionRow>('SELECT * FROM registry_versions WHERE submission_id = ?', [submissionId])!;
    return this.submissions(row.state).find((s) => s.submission_id === submissionId)!;
  }

  private view(item: Pick<ItemRow, 'name'>, row: VersionRow): VersionView {
    return {
      submission_id: row.submission_id,
      version: row.version,
      state: row.state,
      visibility: visibilityOf(row.state),
      sha256: row.sha256,
      size: row.size,
      key_id: row.key_id,
      public_key: row.public_key,
      signature: { alg: SIGNING_ALG, sha256: row.sha256, key_id: row.key_id, sig: row.sig },
      reason: row.reason,
      submitted_at: row.submitted_at,
      reviewed_at: row.reviewed_at,
      download: isDownloadable(row.state) ? downloadPath(item.name, row.version) : null,
    };
  }

  private blobPath(sha256: string): string {
    return join(this.blobs, `${sha256}.tar.gz`);
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }
}

/** The item's next state after `event`, decided on what `db` holds; a refusal is its AppError (403, 404, 409). */
function decide(db: Db, item: ItemRow, event: ItemEvent): ItemRecord {
  const current: ItemRecord = { ownerKeyId: item.owner_key_id, versions: versionsOf(db, item.id).map((v) => ({ version: v.version, keyId: v.key_id, state: v.state, reason: v.reason })) };
  const t = transition(current, event);
  if (!t.ok) throw new AppError(t.code, `${item.name}: ${t.message}`, { id: item.id, name: item.name });
  return t.item;
}

const itemByName = (db: Db, name: string): ItemRow | undefined => db.get<ItemRow>('SELECT * FROM registry_items WHERE name = ?', [name]);

const versionsOf = (db: Db, itemId: string): VersionRow[] => db.all<VersionRow>('SELECT * FROM registry_versions WHERE item_id = ? ORDER BY submitted_at, submission_id', [itemId]);

/** Where a public version's tarball is, under the registry's URL. */
export const downloadPath = (name: string, version: string): string => `${REGISTRY_PREFIX}/items/${encodeURIComponent(name)}/download?version=${encodeURIComponent(version)}`;

const notReviewed = (item: ItemRow, state: VersionState | 'none'): AppError =>
  new AppError(
    'CONFLICT',
    state === 'none' ? `${item.name} has no published version` : `${item.name} is not installable until reviewed (its version is ${state})`,
    { reason: state === 'none' ? 'not_published' : 'not_reviewed', id: item.id, state },
  );

const VERSION_COLUMNS = ['submission_id', 'item_id', 'version', 'state', 'reason', 'key_id', 'public_key', 'sha256', 'sig', 'size', 'manifest', 'display_name', 'description', 'submitted_at', 'reviewed_at'] as const;

function insertVersion(db: Db, row: VersionRow): void {
  db.run(`INSERT INTO registry_versions (${VERSION_COLUMNS.join(', ')}) VALUES (${VERSION_COLUMNS.map(() => '?').join(', ')})`, VERSION_COLUMNS.map((c) => row[c]));
}

/**
 * Stores the states and the binding `next` decided. A version whose state changed by a review gets
 * reviewed_at (the reviewed one, `reviewed`, and those an approval rejected or superseded).
 */
function saveStates(db: Db, itemId: string, next: ItemRecord, now: string, reviewed: string | null): void {
  db.run('UPDATE registry_items SET owner_key_id = ? WHERE id = ?', [next.ownerKeyId, itemId]);
  for (const v of next.versions) {
    const changed = db.run('UPDATE registry_versions SET state = ?, reason = ? WHERE item_id = ? AND version = ? AND (state != ? OR reason IS NOT ?)', [v.state, v.reason, itemId, v.version, v.state, v.reason]);
    if (changed.changes > 0 && reviewed !== null) db.run('UPDATE registry_versions SET reviewed_at = ? WHERE item_id = ? AND version = ?', [now, itemId, v.version]);
  }
}
