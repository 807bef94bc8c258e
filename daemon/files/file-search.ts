// Reading and searching under the file tools' limits: a file is read in chunks of whole characters
// and called binary when a chunk has a NUL byte or is not UTF-8; a search walks a tree breadth-first without
// following symlinks (a link could lead out of the grant) and stops at a file count, a byte budget
// or a result count, saying which.
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { ToolFailure } from '../kernel/tool';

export interface FileHead {
  /** The file's whole size in bytes. */
  size: number;
  binary: boolean;
  /** Up to `cap` bytes from `start` as text ('' when binary). */
  text: string;
  /** Where the text begins: the offset asked for, moved past a character it landed inside. */
  start: number;
  /** Where the text ends: the offset to continue from (equal to size at the end of the file). */
  end: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads up to `cap` bytes of a file from `offset`, as whole UTF-8 characters, or says it is binary.
 * The path was checked by the guard, but it may have changed since: O_NOFOLLOW refuses a symlink put
 * in its place, O_NONBLOCK keeps a FIFO from blocking the open, and the opened file must be regular.
 */
export function readHead(real: string, cap: number, offset = 0): FileHead {
  const fd = openRegular(real);
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.max(0, Math.min(size - offset, cap)));
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, offset + read);
      if (n === 0) break;
      read += n;
    }
    const bytes = buffer.subarray(0, read);
    let lead = 0;
    while (offset > 0 && lead < 3 && lead < bytes.length && (bytes[lead]! & 0xc0) === 0x80) lead++; // inside a character: skip its rest
    const text = decode(bytes.subarray(lead), offset + read < size);
    const start = offset + lead;
    return text === null ? { size, binary: true, text: '', start, end: start } : { size, binary: false, text, start, end: start + Buffer.byteLength(text) };
  } finally {
    closeSync(fd);
  }
}

function openRegular(real: string): number {
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new ToolFailure(`${real}: became a symbolic link after it was checked`);
    throw err;
  }
  if (fstatSync(fd).isFile()) return fd;
  closeSync(fd);
  throw new ToolFailure(`${real}: not a regular file`);
}

/** UTF-8 text, or null for binary; a cut chunk may end inside a character, which is left for the next. */
function decode(bytes: Buffer, cut: boolean): string | null {
  if (bytes.includes(0)) return null;
  for (let drop = 0; drop <= (cut ? 3 : 0) && drop <= bytes.length; drop++) {
    try {
      return utf8.decode(bytes.subarray(0, bytes.length - drop));
    } catch (err) {
      if (!(err instanceof TypeError)) throw err;
    }
  }
  return null;
}

export interface SearchLimits {
  maxFiles: number;
  maxBytes: number;
  maxFileBytes: number;
  maxResults: number;
}

export interface SearchMatch {
  path: string;
  /** 1-based line of the first content match; absent for a name-only match. */
  line?: number;
  text?: string;
}

export interface SearchResult {
  matches: SearchMatch[];
  files_scanned: number;
  bytes_scanned: number;
  /** Why the walk ended early, or null when it covered the whole tree. */
  stopped: 'max_files' | 'max_bytes' | 'max_results' | 'cancelled' | null;
}

export function searchTree(root: string, query: { name?: string; content?: string }, limits: SearchLimits, signal?: AbortSignal): SearchResult {
  const name = query.name?.toLowerCase();
  const content = query.content?.toLowerCase();
  const result: SearchResult = { matches: [], files_scanned: 0, bytes_scanned: 0, stopped: null };
  const queue = [root];
  while (queue.length > 0 && result.stopped === null) {
    const dir = queue.shift()!;
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      result.stopped = signal?.aborted ? 'cancelled' : result.files_scanned >= limits.maxFiles ? 'max_files' : result.bytes_scanned >= limits.maxBytes ? 'max_bytes' : result.matches.length >= limits.maxResults ? 'max_results' : null;
      if (result.stopped) break;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) queue.push(path);
      if (!entry.isFile()) continue;
      result.files_scanned++;
      if (name !== undefined && !entry.name.toLowerCase().includes(name)) continue;
      if (content === undefined) {
        result.matches.push({ path });
        continue;
      }
      const cap = Math.min(limits.maxFileBytes, limits.maxBytes - result.bytes_scanned);
      const head = readHead(path, cap);
      result.bytes_scanned += Math.min(head.size, cap);
      if (head.binary) continue;
      const lines = head.text.split('\n');
      const at = lines.findIndex((l) => l.toLowerCase().includes(content));
      if (at !== -1) result.matches.push({ path, line: at + 1, text: lines[at]!.slice(0, 200) });
    }
  }
  return result;
}
