// The states of a registry item's versions (issue 16, spec 3.3; docs/registry.md "States"), as one pure
// function from an item and an event to the next item or a refusal. The registry service stores what
// this decides and nothing else changes a state.
//
//   (new number) submit ──▶ submitted ──approve──▶ published ──a newer one approved──▶ superseded
//   submitted ──reject (reason)──▶ rejected ──submit (same number, new bytes)──▶ submitted
//   submitted, published, superseded ──withdraw (the key that signed it)──▶ withdrawn
//
// - A submission is private; published and superseded versions are public (listed: the published one;
//   downloadable: both, so an install pinned to an older digest still resolves).
// - A name binds to a publisher key at its first approval; from then on only that key submits or
//   withdraws versions of it (FORBIDDEN), and approving binds and rejects the other keys' waiting
//   submissions of the same name. Before any approval several keys may submit: the reviewer chooses.
// - Versions only go up: a submission or approval not newer (semver precedence) than the published
//   version is a CONFLICT; a version number is used once, except that a rejected one may be submitted
//   again (back to submitted, with its new bytes).
// - Withdrawing the published version leaves the item with none until a newer one is approved.
import type { VersionState, Visibility } from '../../protocol/registry';

export interface VersionRecord {
  readonly version: string;
  readonly keyId: string;
  readonly state: VersionState;
  readonly reason: string | null;
}

export interface ItemRecord {
  /** The key the name is bound to: its first approved version's; null before any approval. */
  readonly ownerKeyId: string | null;
  readonly versions: readonly VersionRecord[];
}

export type ItemEvent =
  | { readonly type: 'submit'; readonly version: string; readonly keyId: string }
  | { readonly type: 'approve'; readonly version: string }
  | { readonly type: 'reject'; readonly version: string; readonly reason: string }
  | { readonly type: 'withdraw'; readonly version: string; readonly keyId: string };

export type RefusalCode = 'CONFLICT' | 'FORBIDDEN' | 'NOT_FOUND';
export type Transition = { readonly ok: true; readonly item: ItemRecord } | { readonly ok: false; readonly code: RefusalCode; readonly message: string };

export const EMPTY_ITEM: ItemRecord = { ownerKeyId: null, versions: [] };

/** The reason given to another key's waiting submission when a name binds. */
export const boundReason = (keyId: string): string => `the name is bound to publisher key ${keyId} (its first approved version)`;

export const visibilityOf = (state: VersionState): Visibility => (state === 'published' || state === 'superseded' ? 'public' : 'private');
export const isDownloadable = (state: VersionState): boolean => visibilityOf(state) === 'public';

/** The published version, when there is one. */
export const publishedOf = (item: ItemRecord): VersionRecord | undefined => item.versions.find((v) => v.state === 'published');

/** The next item after `event`, or why it is refused (the item is then unchanged). */
export function transition(item: ItemRecord, event: ItemEvent): Transition {
  switch (event.type) {
    case 'submit':
      return submit(item, event.version, event.keyId);
    case 'approve':
      return approve(item, event.version);
    case 'reject':
      return withVersion(item, event.version, (v) => (v.state === 'submitted' ? ok(replace(item, { ...v, state: 'rejected', reason: event.reason })) : stateRefusal(v, 'rejected')));
    case 'withdraw':
      return withdraw(item, event.version, event.keyId);
  }
}

function submit(item: ItemRecord, version: string, keyId: string): Transition {
  if (item.ownerKeyId !== null && item.ownerKeyId !== keyId) return refuse('FORBIDDEN', `${boundReason(item.ownerKeyId)}; this submission is signed by ${keyId}`);
  const current = publishedOf(item);
  if (current && compareSemver(version, current.version) <= 0) return refuse('CONFLICT', `version ${version} is not newer than the published ${current.version}`);
  const existing = item.versions.find((v) => v.version === version);
  if (existing === undefined) return ok({ ...item, versions: [...item.versions, { version, keyId, state: 'submitted', reason: null }] });
  if (existing.state !== 'rejected') return refuse('CONFLICT', `version ${version} was submitted already (${existing.state}); publish a new version number`);
  return ok(replace(item, { version, keyId, state: 'submitted', reason: null }));
}

function approve(item: ItemRecord, version: string): Transition {
  return withVersion(item, version, (v) => {
    if (v.state !== 'submitted') return stateRefusal(v, 'approved');
    if (item.ownerKeyId !== null && item.ownerKeyId !== v.keyId) return refuse('CONFLICT', `${boundReason(item.ownerKeyId)}; version ${version} is signed by ${v.keyId}`);
    const current = publishedOf(item);
    if (current && compareSemver(version, current.version) <= 0) return refuse('CONFLICT', `version ${version} is not newer than the published ${current.version}`);
    const owner = item.ownerKeyId ?? v.keyId;
    const versions = item.versions.map((other): VersionRecord => {
      if (other.version === version) return { ...other, state: 'published', reason: null };
      if (other.state === 'published') return { ...other, state: 'superseded' };
      if (other.state === 'submitted' && other.keyId !== owner) return { ...other, state: 'rejected', reason: boundReason(owner) };
      return other;
    });
    return ok({ ownerKeyId: owner, versions });
  });
}

function withdraw(item: ItemRecord, version: string, keyId: string): Transition {
  return withVersion(item, version, (v) => {
    if (v.keyId !== keyId) return refuse('FORBIDDEN', `version ${version} was published with key ${v.keyId}; only that key withdraws it`);
    if (v.state === 'rejected' || v.state === 'withdrawn') return stateRefusal(v, 'withdrawn');
    return ok(replace(item, { ...v, state: 'withdrawn' }));
  });
}

function withVersion(item: ItemRecord, version: string, fn: (v: VersionRecord) => Transition): Transition {
  const v = item.versions.find((x) => x.version === version);
  return v === undefined ? refuse('NOT_FOUND', `no version ${version}`) : fn(v);
}

const replace = (item: ItemRecord, next: VersionRecord): ItemRecord => ({ ...item, versions: item.versions.map((v) => (v.version === next.version ? next : v)) });
const ok = (item: ItemRecord): Transition => ({ ok: true, item });
const refuse = (code: RefusalCode, message: string): Transition => ({ ok: false, code, message });
const stateRefusal = (v: VersionRecord, wanted: string): Transition => refuse('CONFLICT', `version ${v.version} is ${v.state}; it cannot be ${wanted}`);

// ── Semantic Versioning 2.0.0 precedence (semver.org, 11) ──────────────────────────────────────────
/** Negative, zero or positive as `a` precedes, equals or follows `b`; build metadata is ignored. */
export function compareSemver(a: string, b: string): number {
  const [coreA, preA] = splitVersion(a);
  const [coreB, preB] = splitVersion(b);
  for (let i = 0; i < 3; i++) {
    const d = compareNumeric(coreA[i] ?? '0', coreB[i] ?? '0');
    if (d !== 0) return d;
  }
  if (preA === null || preB === null) return preA === preB ? 0 : preA === null ? 1 : -1;
  const pa = preA.split('.');
  const pb = preB.split('.');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const d = compareIdentifier(pa[i]!, pb[i]!);
    if (d !== 0) return d;
  }
  return pa.length - pb.length;
}

function splitVersion(v: string): [string[], string | null] {
  const noBuild = v.split('+', 1)[0]!;
  const dash = noBuild.indexOf('-');
  return dash < 0 ? [noBuild.split('.'), null] : [noBuild.slice(0, dash).split('.'), noBuild.slice(dash + 1)];
}

/** Numeric strings without leading zeros: the longer is larger, else the lexically larger. */
const compareNumeric = (a: string, b: string): number => (a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0);

function compareIdentifier(a: string, b: string): number {
  const na = /^\d+$/.test(a);
  const nb = /^\d+$/.test(b);
  if (na && nb) return compareNumeric(a, b);
  if (na !== nb) return na ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
