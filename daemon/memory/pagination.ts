// Keyset pagination, newest first (docs/memory.md "Pagination"): the cursor is the (created_at, seq)
// of the last item of the previous page, opaque to clients (base64url). A cursor that does not decode
// is a 400, not an empty page, so a client bug is visible.
import { badRequest } from '../kernel/errors';

export interface PageKey {
  createdAt: number;
  seq: number;
}

export function encodeCursor(key: PageKey): string {
  return Buffer.from(`${key.createdAt}:${key.seq}`).toString('base64url');
}

export function decodeCursor(cursor: string): PageKey {
  const m = /^(-?\d{1,16}):(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw badRequest('cursor is not one this brain issued', { cursor });
  return { createdAt: Number(m[1]), seq: Number(m[2]) };
}

/** SQL fragment + params selecting rows strictly older than the cursor (ORDER BY created_at DESC, seq DESC). */
export function olderThan(cursor: string | undefined): { where: string; params: number[] } {
  if (cursor === undefined) return { where: '1', params: [] };
  const k = decodeCursor(cursor);
  return { where: '(created_at < ? OR (created_at = ? AND seq < ?))', params: [k.createdAt, k.createdAt, k.seq] };
}

/** Cuts a limit+1 query result into a page and the cursor of the next one. */
export function toPage<R extends { created_at: number; seq: number }, T>(rows: R[], limit: number, map: (r: R) => T): { items: T[]; next_cursor: string | null } {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return { items: page.map(map), next_cursor: more && last ? encodeCursor({ createdAt: last.created_at, seq: last.seq }) : null };
}
