// Path resolution against the grants (issue 11), the security core of the file tools. A path is
// normalised (`.` and `..` folded as text, as path.resolve does), then resolved with realpath, so every
// symlink on the way is followed; the *resolved* path is what must lie inside an active grant with
// the needed mode, and it is the resolved path the tools then open. Anything else is refused with a
// reason: relative paths, `..` that climbs out, links that point outside every grant, device files,
// FIFOs and sockets (reading one can block or have side effects), and paths no grant covers.
import { lstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path';
import type { GrantMode } from '../../protocol/files';
import type { ActiveGrant } from './grants';

export type PathKind = 'file' | 'directory';

export interface ResolvedPath {
  /** The realpath (for a path that does not exist yet: its parent's realpath plus its name). */
  real: string;
  /** null when the path does not exist (allowed only with `mayBeMissing`). */
  kind: PathKind | null;
  grant: ActiveGrant;
}

/** `denied`: no grant covers the path (or not with write): a refusal of the permission plane, not a bad path. */
export type Resolution = { ok: true; path: ResolvedPath } | { ok: false; reason: string; denied?: true };

export interface ResolveOptions {
  /** The path may be missing (a file to create, a move's destination); its parent must exist. */
  mayBeMissing?: boolean;
}

/** True when `real` is `dir` or inside it (both absolute realpaths). */
export function isInside(real: string, dir: string): boolean {
  if (real === dir) return true;
  return real.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** The grant covering a realpath with the needed mode (write includes read), preferring the deepest. */
export function coveringGrant(real: string, grants: readonly ActiveGrant[], mode: GrantMode): ActiveGrant | undefined {
  return grants
    .filter((g) => isInside(real, g.path) && (mode === 'read' || g.mode === 'write'))
    .sort((a, b) => b.path.length - a.path.length)[0];
}

export function resolveGranted(input: string, grants: readonly ActiveGrant[], mode: GrantMode, options: ResolveOptions = {}): Resolution {
  const refuse = (reason: string): Resolution => ({ ok: false, reason: `${input}: ${reason}` });
  if (input.includes('\0')) return refuse('contains a NUL character');
  if (!isAbsolute(input)) return refuse('not an absolute path (file tools take absolute paths inside a granted folder)');
  const normal = resolve(input);
  const found = realOf(normal, options.mayBeMissing === true);
  if ('reason' in found) return refuse(found.reason);
  const kind = found.stats === null ? null : kindOf(found.stats);
  if (kind === undefined) return refuse(`${describeSpecial(found.stats!)} are refused (only regular files and directories)`);
  const grant = coveringGrant(found.real, grants, mode);
  if (!grant) {
    const readOnly = mode === 'write' && coveringGrant(found.real, grants, 'read');
    const via = found.real === normal ? '' : ` (it resolves to ${found.real})`;
    const reason = readOnly ? `the folder is granted read-only${via}; grant it with --write to change files` : `outside every granted folder${via}; grant one with \`svc grant add <folder>\``;
    return { ok: false, reason: `${input}: ${reason}`, denied: true };
  }
  return { ok: true, path: { real: found.real, kind, grant } };
}

type Found = { real: string; stats: Stats | null } | { reason: string };

function realOf(normal: string, mayBeMissing: boolean): Found {
  try {
    const real = realpathSync(normal);
    return { real, stats: statSync(real) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') return { reason: `cannot be resolved (${code ?? (err as Error).message})` };
  }
  if (isDanglingLink(normal)) return { reason: 'a symbolic link whose target does not exist' };
  if (!mayBeMissing) return { reason: 'does not exist' };
  const name = basename(normal);
  try {
    const parent = realpathSync(dirname(normal));
    if (!statSync(parent).isDirectory()) return { reason: 'its parent is not a directory' };
    return { real: parent === sep ? sep + name : parent + sep + name, stats: null };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { reason: code === 'ENOENT' || code === 'ENOTDIR' ? 'its folder does not exist' : `its folder cannot be resolved (${code ?? (err as Error).message})` };
  }
}

function isDanglingLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return false;
    throw err;
  }
}

function kindOf(stats: Stats): PathKind | undefined {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  return undefined;
}

function describeSpecial(stats: Stats): string {
  if (stats.isFIFO()) return 'FIFOs (named pipes)';
  if (stats.isSocket()) return 'sockets';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'device files';
  return 'special files';
}
