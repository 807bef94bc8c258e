// The folder grants (issue 11): which directories the file tools may read or write, kept in the store
// so they survive a restart. Every check reads the current list (cached, the cache dropped on each
// change), so a grant or revoke applies at once, without a restart; an expired grant simply stops
// matching and is removed on the next change.
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { Grant, GrantMode } from '../../protocol/files';
import type { CapabilityContext, Clock, Migration } from '../kernel/capability';
import { AppError } from '../kernel/errors';

export const GRANT_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'folder grants',
    up: 'CREATE TABLE files_grants (path TEXT PRIMARY KEY, mode TEXT NOT NULL, expires_at INTEGER, created_at INTEGER NOT NULL)',
  },
];

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
/** The longest grant a duration may ask for; longer means "until revoked" (omit --for). */
export const MAX_GRANT_MS = 366 * UNIT_MS.d!;

/** `90m`, `2h`, `1d12h` → milliseconds; AppError BAD_REQUEST for anything else. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (!/^(\d{1,6}[smhdw])+$/.test(trimmed)) throw new AppError('BAD_REQUEST', `duration ${JSON.stringify(text)}: expected e.g. 90m, 2h, 1d12h (units s, m, h, d, w)`, { field: 'for' });
  let ms = 0;
  for (const [, n, unit] of trimmed.matchAll(/(\d+)([smhdw])/g)) ms += Number(n) * UNIT_MS[unit!]!;
  if (ms <= 0) throw new AppError('BAD_REQUEST', `duration ${JSON.stringify(text)} must be longer than zero`, { field: 'for' });
  if (ms > MAX_GRANT_MS) throw new AppError('BAD_REQUEST', `duration ${JSON.stringify(text)} is longer than 366 days; omit it for a grant until revoked`, { field: 'for' });
  return ms;
}

interface GrantRow {
  path: string;
  mode: string;
  expires_at: number | null;
  created_at: number;
}

/** A grant as the guard uses it: times in epoch milliseconds. */
export interface ActiveGrant {
  path: string;
  mode: GrantMode;
  expiresAt: number | null;
}

export class GrantStore {
  private cache: GrantRow[] | undefined;

  constructor(
    private readonly store: CapabilityContext['store'],
    private readonly clock: Clock,
  ) {}

  /** The grants in force now (expired ones left out). */
  active(): ActiveGrant[] {
    const now = this.clock.now();
    return this.rows()
      .filter((r) => r.expires_at === null || r.expires_at > now)
      .map((r) => ({ path: r.path, mode: r.mode === 'write' ? 'write' : 'read', expiresAt: r.expires_at }));
  }

  list(): Grant[] {
    const now = this.clock.now();
    return this.rows()
      .filter((r) => r.expires_at === null || r.expires_at > now)
      .map(toGrant);
  }

  /** Grants (or replaces the grant of) a directory; the path is stored as its realpath. */
  async add(path: string, mode: GrantMode, forMs: number | undefined): Promise<Grant> {
    const real = grantableDirectory(path);
    const now = this.clock.now();
    const row: GrantRow = { path: real, mode, expires_at: forMs === undefined ? null : now + forMs, created_at: now };
    await this.store.write((db) => {
      db.run('DELETE FROM files_grants WHERE expires_at IS NOT NULL AND expires_at <= ?', [now]);
      db.run('INSERT OR REPLACE INTO files_grants (path, mode, expires_at, created_at) VALUES (?, ?, ?, ?)', [row.path, row.mode, row.expires_at, row.created_at]);
    });
    this.cache = undefined;
    return toGrant(row);
  }

  /** Revokes the grant of a directory, named as granted or by any path that resolves to it. */
  async revoke(path: string): Promise<Grant> {
    const rows = this.rows();
    const match = rows.find((r) => r.path === path) ?? rows.find((r) => r.path === realpathOrSelf(path));
    if (!match) throw new AppError('NOT_FOUND', `no grant for ${path}`, { path });
    await this.store.write((db) => db.run('DELETE FROM files_grants WHERE path = ?', [match.path]));
    this.cache = undefined;
    return toGrant(match);
  }

  private rows(): GrantRow[] {
    const rows = this.cache ?? this.store.all<GrantRow>('SELECT path, mode, expires_at, created_at FROM files_grants ORDER BY path');
    this.cache = rows;
    return rows;
  }
}

function toGrant(r: GrantRow): Grant {
  return {
    path: r.path,
    mode: r.mode === 'write' ? 'write' : 'read',
    expires_at: r.expires_at === null ? null : new Date(r.expires_at).toISOString(),
    created_at: new Date(r.created_at).toISOString(),
  };
}

/** The realpath of an absolute path to an existing directory, or a 400 saying which of those it is not. */
function grantableDirectory(path: string): string {
  if (!isAbsolute(path)) throw new AppError('BAD_REQUEST', `${path}: a grant needs an absolute path`, { path });
  let real: string;
  try {
    real = realpathSync(path);
  } catch (err) {
    throw new AppError('BAD_REQUEST', `${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be resolved (${(err as Error).message})`}`, { path });
  }
  if (!statSync(real).isDirectory()) throw new AppError('BAD_REQUEST', `${path}: not a directory (grants are for folders)`, { path });
  return real;
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return path;
    throw err;
  }
}
