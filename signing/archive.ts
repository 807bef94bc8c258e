// The .tar.gz of a published skill or daemon (issue 16, "Marketplace registry"; docs/registry.md
// "Archives"): packed the same way every time, and read back by one careful reader that the registry
// (on publish) and the brain (on install) both use.
//
// Packing is deterministic: entries sorted by path, plain files only (directories are implied by the
// paths), mode 0644, mtime 0, uid/gid 0 and no owner names, ustar headers (no pax), gzip without a
// name or time. The same files give the same bytes, so the same sha256 and signature.
//
// Reading trusts nothing in the archive. The gzip layer is inflated with a bound on its output (a
// gzip bomb stops there), then the tar headers are parsed by the `tar` package in strict mode (a bad
// checksum or a truncated archive is an error), and every entry is checked before anything is
// written: only regular files and directories (no symlinks, hard links, devices, FIFOs), relative
// paths without `..`, `.` or empty segments, no backslashes or NULs, no entry twice, no file where
// another entry needs a directory, and limits on the number of entries, each entry's size, the total
// size and the path length. extractArchive writes only into a directory that is new or empty, creates
// every directory itself (so no link inside it can redirect a write), and opens each file with
// O_EXCL. The modes of the archive are ignored: files 0644, directories 0755.
import { gunzipSync, gzipSync } from 'node:zlib';
import { lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Header, Parser, type ReadEntry } from 'tar';

export interface ArchiveLimits {
  /** Entries (files and directories) in one archive. */
  readonly maxEntries: number;
  /** Bytes of one file. */
  readonly maxEntryBytes: number;
  /** Bytes of all files together. */
  readonly maxTotalBytes: number;
  /** Characters of one entry's path. */
  readonly maxPathLength: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = { maxEntries: 1000, maxEntryBytes: 8 * 1024 * 1024, maxTotalBytes: 32 * 1024 * 1024, maxPathLength: 240 };

/** One file of an archive: its relative path (`/`-separated) and its bytes. */
export interface ArchiveFile {
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** An archive that is refused, or files that cannot be packed; the message says which entry and why. */
export class ArchiveError extends Error {}

const BLOCK = 512;
/** Directory depth past which a path is refused (no skill needs more). */
const MAX_DEPTH = 32;
const FIXED_MTIME = new Date(0);

// ── Packing ──────────────────────────────────────────────────────────────────────────────────────
/** The deterministic .tar.gz of `files` (any order in, sorted by path in the archive). */
export function packArchive(files: readonly ArchiveFile[], limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Uint8Array {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  checkPlan(sorted.map((f) => ({ path: checkPath(f.path, limits), type: 'file' as const, size: f.bytes.length })), limits);
  const blocks: Uint8Array[] = [];
  for (const file of sorted) {
    blocks.push(headerBlock(file));
    blocks.push(file.bytes);
    const pad = (BLOCK - (file.bytes.length % BLOCK)) % BLOCK;
    if (pad > 0) blocks.push(new Uint8Array(pad));
  }
  blocks.push(new Uint8Array(2 * BLOCK)); // the end-of-archive marker
  // gzip from node:zlib writes mtime 0 and no file name: the bytes depend on the content only.
  return new Uint8Array(gzipSync(Buffer.concat(blocks), { level: 9 }));
}

function headerBlock(file: ArchiveFile): Buffer {
  const header = new Header({ path: file.path, mode: 0o644, uid: 0, gid: 0, size: file.bytes.length, mtime: FIXED_MTIME, type: 'File', uname: '', gname: '' });
  const block = Buffer.alloc(BLOCK);
  if (header.encode(block, 0)) throw new ArchiveError(`${file.path}: the path does not fit a ustar header (at most 100 characters of name after a 155-character directory prefix, ASCII)`);
  return block;
}

// ── Reading ──────────────────────────────────────────────────────────────────────────────────────
/** An entry read and checked: a file with its bytes, or a directory. */
export type ArchiveEntry = { readonly type: 'file'; readonly path: string; readonly bytes: Uint8Array } | { readonly type: 'directory'; readonly path: string };

/** The checked entries of a .tar.gz (or plain .tar), in archive order; an ArchiveError when any is refused. */
export async function readArchive(bytes: Uint8Array, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<ArchiveEntry[]> {
  const tarBytes = inflate(bytes, limits);
  const entries = await parseTar(tarBytes, limits);
  if (entries.length === 0) throw new ArchiveError('the archive has no entries');
  checkPlan(entries.map((e) => ({ path: e.path, type: e.type, size: e.type === 'file' ? e.bytes.length : 0 })), limits);
  return entries;
}

/** The files of an archive by path (directories left out). */
export async function readArchiveFiles(bytes: Uint8Array, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  for (const entry of await readArchive(bytes, limits)) if (entry.type === 'file') files.set(entry.path, entry.bytes);
  return files;
}

/**
 * Extracts a .tar.gz into `destDir` (made when missing; an existing one must be an empty directory)
 * and returns the relative paths of the files written, sorted. Every entry is checked before the
 * first write, so a refused archive leaves nothing behind.
 */
export async function extractArchive(bytes: Uint8Array, destDir: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<string[]> {
  const entries = await readArchive(bytes, limits);
  prepareDestination(destDir);
  const dirs = new Set<string>();
  for (const entry of entries) for (const dir of parentsOf(entry.path, entry.type === 'directory')) dirs.add(dir);
  for (const dir of [...dirs].sort((a, b) => a.length - b.length)) mkdirSync(join(destDir, ...dir.split('/')), { mode: 0o755 });
  const written: string[] = [];
  for (const entry of entries) {
    if (entry.type !== 'file') continue;
    writeFileSync(join(destDir, ...entry.path.split('/')), entry.bytes, { flag: 'wx', mode: 0o644 });
    written.push(entry.path);
  }
  return written.sort();
}

function prepareDestination(destDir: string): void {
  let stat;
  try {
    stat = lstatSync(destDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(destDir, { recursive: true, mode: 0o755 });
    return;
  }
  if (!stat.isDirectory()) throw new ArchiveError(`${destDir} is not a directory`);
  if (readdirSync(destDir).length > 0) throw new ArchiveError(`${destDir} is not empty: an archive is extracted into a new or empty directory`);
}

/** The gzip layer inflated with a bound on its output; a plain tar (no gzip magic) is taken as it is. */
function inflate(bytes: Uint8Array, limits: ArchiveLimits): Buffer {
  const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Headers, padding and the end marker on top of the file bytes; past that, the output is no archive within the limits.
  const bound = limits.maxTotalBytes + (limits.maxEntries + 4) * 3 * BLOCK;
  const gzipped = input.length >= 2 && input[0] === 0x1f && input[1] === 0x8b;
  if (!gzipped) {
    if (input.length > bound) throw new ArchiveError(`the archive is larger than ${bound} bytes`);
    return input;
  }
  try {
    return gunzipSync(input, { maxOutputLength: bound });
  } catch (err) {
    if (err instanceof RangeError) throw new ArchiveError(`the archive inflates past ${bound} bytes`);
    if (err instanceof Error && 'errno' in err) throw new ArchiveError(`not a gzip stream: ${err.message}`);
    throw err;
  }
}

/** The entries of a tar, each checked as it is read; the parse stops at the first refused one. */
function parseTar(tarBytes: Buffer, limits: ArchiveLimits): Promise<ArchiveEntry[]> {
  return new Promise((resolve, reject) => {
    const entries: ArchiveEntry[] = [];
    let failed = false;
    let total = 0;
    const fail = (parser: Parser, err: Error): void => {
      if (failed) return;
      failed = true;
      parser.abort(err);
      reject(err);
    };
    const parser: Parser = new Parser({
      strict: true,
      maxMetaEntrySize: 64 * 1024,
      onReadEntry: (entry: ReadEntry) => {
        try {
          const checked = checkEntry(entry, limits, entries.length);
          total += checked.size;
          if (total > limits.maxTotalBytes) throw new ArchiveError(`the files add up to more than ${limits.maxTotalBytes} bytes`);
          collect(entry, checked, entries);
        } catch (err) {
          entry.resume();
          if (err instanceof ArchiveError) fail(parser, err);
          else throw err;
        }
      },
    });
    parser.on('error', (err: Error) => fail(parser, err instanceof ArchiveError ? err : new ArchiveError(`not a tar archive: ${err.message}`)));
    parser.on('end', () => {
      if (!failed) resolve(entries);
    });
    parser.end(tarBytes);
  });
}

/** Reads a checked entry's bytes (a directory has none) into `entries` when it ends. */
function collect(entry: ReadEntry, checked: { path: string; type: 'file' | 'directory'; size: number }, entries: ArchiveEntry[]): void {
  if (checked.type === 'directory') {
    entries.push({ type: 'directory', path: checked.path });
    entry.resume();
    return;
  }
  const chunks: Buffer[] = [];
  entry.on('data', (chunk: Buffer) => chunks.push(chunk));
  entry.on('end', () => entries.push({ type: 'file', path: checked.path, bytes: new Uint8Array(Buffer.concat(chunks)) }));
}

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

function checkEntry(entry: ReadEntry, limits: ArchiveLimits, seen: number): { path: string; type: 'file' | 'directory'; size: number } {
  if (seen + 1 > limits.maxEntries) throw new ArchiveError(`more than ${limits.maxEntries} entries`);
  const raw = entry.path;
  if (entry.type === 'Directory') return { path: checkPath(raw.replace(/\/+$/, ''), limits), type: 'directory', size: 0 };
  if (!FILE_TYPES.has(entry.type)) throw new ArchiveError(`${JSON.stringify(raw)}: a ${entry.type} entry (only regular files and directories are accepted)`);
  const path = checkPath(raw, limits);
  if (entry.size > limits.maxEntryBytes) throw new ArchiveError(`${path}: ${entry.size} bytes, more than ${limits.maxEntryBytes}`);
  return { path, type: 'file', size: entry.size };
}

/**
 * A safe relative path in its one accepted spelling (a single leading `./` is dropped), or an
 * ArchiveError: absolute, a drive letter, `..`, `.` or empty segments, backslashes, NULs and control
 * characters are refused.
 */
export function checkPath(raw: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): string {
  const path = raw.startsWith('./') ? raw.slice(2) : raw;
  const refuse = (why: string): never => {
    throw new ArchiveError(`${JSON.stringify(raw)}: ${why}`);
  };
  if (path === '') refuse('an empty path');
  if (path.length > limits.maxPathLength) refuse(`a path longer than ${limits.maxPathLength} characters`);
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) refuse('an absolute path');
  if (/[\\\u0000-\u001f\u007f]/.test(path)) refuse('a backslash or control character in the path');
  const segments = path.split('/');
  if (segments.length > MAX_DEPTH) refuse(`deeper than ${MAX_DEPTH} directories`);
  if (segments.some((s) => s === '' || s === '.' || s === '..')) refuse('a path with an empty, `.` or `..` segment');
  return path;
}

/** Each path at most once, and no entry below a file. */
function checkPlan(plan: readonly { path: string; type: 'file' | 'directory'; size: number }[], limits: ArchiveLimits): void {
  if (plan.length > limits.maxEntries) throw new ArchiveError(`more than ${limits.maxEntries} entries`);
  let total = 0;
  const kinds = new Map<string, 'file' | 'directory'>();
  for (const entry of plan) {
    if (entry.size > limits.maxEntryBytes) throw new ArchiveError(`${entry.path}: ${entry.size} bytes, more than ${limits.maxEntryBytes}`);
    total += entry.size;
    if (kinds.has(entry.path)) throw new ArchiveError(`${entry.path}: in the archive twice`);
    kinds.set(entry.path, entry.type);
  }
  if (total > limits.maxTotalBytes) throw new ArchiveError(`the files add up to more than ${limits.maxTotalBytes} bytes`);
  for (const entry of plan) {
    for (const dir of parentsOf(entry.path, false)) {
      if (kinds.get(dir) === 'file') throw new ArchiveError(`${entry.path}: below ${dir}, which is a file`);
    }
  }
}

/** The directories a path needs, outermost first (the path itself too when it is a directory). */
function parentsOf(path: string, self: boolean): string[] {
  const segments = path.split('/');
  const out: string[] = [];
  for (let i = 1; i < segments.length; i++) out.push(segments.slice(0, i).join('/'));
  if (self) out.push(path);
  return out;
}
