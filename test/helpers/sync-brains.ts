// Brains that sync, seen from a test: pairing one with another (a pairing token of kind brain minted on
// one, completed from the other with a pair URL naming the address its peers reach it at), and reading
// back everything that syncs (every note, episode and fact) to compare brains with each other.
import assert from 'node:assert/strict';
import { encodePairUrl } from '../../mesh/pair-payload';
import type { NoteRevisions, SyncNowResult, SyncPeerView, SyncStatus } from '../../protocol/sync-api';

/** A running brain: `url` is where other brains reach it; `api` is an authenticated request to it. */
export interface ApiBrain {
  readonly url: string;
  api(path: string, init?: RequestInit): Promise<Response>;
}

export interface NoteItem {
  id: string;
  text: string;
}

export interface EpisodeItem {
  id: string;
  summary: string;
}

export interface TripleItem {
  id: string;
  subject: string;
  predicate: string;
  object: string;
  sources: { source: string }[];
}

export async function call<T>(brain: ApiBrain, path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const r = await brain.api(path, init);
  return { status: r.status, body: (await r.json()) as T };
}

/** A request that must answer `status`; resolves with its body. */
export async function expectStatus<T>(brain: ApiBrain, status: number, path: string, init: RequestInit = {}): Promise<T> {
  const r = await call<T>(brain, path, init);
  assert.equal(r.status, status, `${init.method ?? 'GET'} ${path}: ${JSON.stringify(r.body)}`);
  return r.body;
}

export const post = (body: unknown, method = 'POST'): RequestInit => ({ method, body: JSON.stringify(body) });

/** Mints a brain token on `minting` and completes pairing from `completing` with a pair URL naming `minting.url`. */
export async function pairBrains(minting: ApiBrain, completing: ApiBrain): Promise<SyncPeerView> {
  const minted = await expectStatus<{ token: string; expires_at: number }>(minting, 201, '/api/devices/pair', post({ kind: 'brain', name: 'peer' }));
  const status = await expectStatus<SyncStatus>(minting, 200, '/api/sync/status');
  const url = encodePairUrl({ v: 1, kind: 'brain', brain_id: status.brain_id, token: minted.token, expires_at: Math.floor(minted.expires_at), pin_required: false, urls: [minting.url], mdns: null });
  return expectStatus<SyncPeerView>(completing, 201, '/api/sync/pair', post({ url }));
}

export const brainId = async (brain: ApiBrain): Promise<string> => (await expectStatus<SyncStatus>(brain, 200, '/api/sync/status')).brain_id;

/** `sync now` on one brain; resolves with each peer's outcome. */
export async function syncNow(brain: ApiBrain, timeoutMs = 20_000): Promise<SyncNowResult> {
  return expectStatus<SyncNowResult>(brain, 200, '/api/sync/now', post({ timeout_ms: timeoutMs }));
}

/** Every note, newest first, page by page; each as (id, text). */
export async function allNotes(brain: ApiBrain): Promise<NoteItem[]> {
  const items: NoteItem[] = [];
  let cursor: string | null = null;
  do {
    const page: { items: NoteItem[]; next_cursor: string | null } = await expectStatus(brain, 200, `/api/memory/notes?limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    items.push(...page.items.map((n) => ({ id: n.id, text: n.text })));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return items;
}

/** Every episode, page by page; each as (id, summary). */
export async function allEpisodes(brain: ApiBrain): Promise<EpisodeItem[]> {
  const items: EpisodeItem[] = [];
  let cursor: string | null = null;
  do {
    const page: { items: EpisodeItem[]; next_cursor: string | null } = await expectStatus(brain, 200, `/api/memory/episodes?limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    items.push(...page.items.map((e) => ({ id: e.id, summary: e.summary })));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return items;
}

/** Every fact (at most 200, enough for a test), as (id, subject, predicate, object, its sources). */
export async function allTriples(brain: ApiBrain): Promise<TripleItem[]> {
  const r = await expectStatus<{ triples: TripleItem[]; truncated: boolean }>(brain, 200, '/api/memory/knowledge?depth=0&limit=200');
  assert.equal(r.truncated, false, 'more than 200 facts: the comparison would miss some');
  return r.triples.map((t) => ({ id: t.id, subject: t.subject, predicate: t.predicate, object: t.object, sources: t.sources.map((s) => ({ source: s.source })).sort((a, b) => a.source.localeCompare(b.source)) }));
}

export interface SyncedState {
  notes: NoteItem[];
  episodes: EpisodeItem[];
  triples: TripleItem[];
}

/** What syncs, in a form two brains can be compared by: notes, episodes and facts sorted by id. */
export async function syncedState(brain: ApiBrain): Promise<SyncedState> {
  const byId = <T extends { id: string }>(a: T, b: T): number => a.id.localeCompare(b.id);
  return { notes: (await allNotes(brain)).sort(byId), episodes: (await allEpisodes(brain)).sort(byId), triples: (await allTriples(brain)).sort(byId) };
}

export const revisions = (brain: ApiBrain, noteId: string): Promise<NoteRevisions> => expectStatus<NoteRevisions>(brain, 200, `/api/memory/notes/${noteId}/revisions`);
