// A note's revisions (docs/sync.md "The guarantees", Revisions): GET /api/memory/notes/:id/revisions
// answers from the op log's merged state of the note (op-log.ts noteRevisions), not from the tier
// table: the current version, the versions that lost to it in concurrent edits (its history, oldest
// first), and whether a delete stamped after every version removed it. A note the op log never knew
// (never written since sync was enabled and not yet backfilled, or its tombstone was collected) is a 404.
import type { Version } from '../../sync/merge';
import { decodeHlc } from '../../sync/hlc';
import type { NoteBody } from '../../protocol/sync';
import { NoteRevisions, type NoteRevision } from '../../protocol/sync-api';
import { IdParams } from '../../protocol/memory';
import { ErrorEnvelope } from '../../protocol/errors';
import { routes } from '../http/route-kit';
import { notFound } from '../kernel/errors';
import type { Db, RoutePlugin } from '../kernel/capability';
import { noteRevisions } from './op-log';

/** One version as the API shows it: who wrote it and when, by the stamp it was written with. */
function revisionOf(v: Version<NoteBody>): NoteRevision {
  const stamp = decodeHlc(v.hlc);
  if (stamp === undefined) throw new Error(`op ${v.op_id} in the merged state of a note has no valid stamp: ${JSON.stringify(v.hlc)}`);
  return { text: v.body.text, source: v.body.source, tags: [...v.body.tags], brain_id: stamp.brain, at: stamp.wall, hlc: v.hlc };
}

/** The revisions of note `id`, or null when the op log never knew it. */
export function revisionsOf(db: Db, id: string): NoteRevisions | null {
  const view = noteRevisions(db, id);
  if (view === null) return null;
  return { id, current: view.current === null ? null : revisionOf(view.current), history: view.history.map(revisionOf), deleted: view.deleted };
}

/** The routes of the memory's sync side; admin-only (route-kit's default). */
export const syncMemoryRoutes = (db: Db): RoutePlugin =>
  routes(async (app) => {
    app.get('/api/memory/notes/:id/revisions', { schema: { params: IdParams, response: { 200: NoteRevisions, 400: ErrorEnvelope, 404: ErrorEnvelope } } }, async (req) => {
      const found = revisionsOf(db, req.params.id);
      if (found === null) throw notFound('note', req.params.id);
      return found;
    });
  });
