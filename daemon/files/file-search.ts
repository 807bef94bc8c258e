// Reading and searching under the file tools' limits: a file is read only up to a cap and called
// binary when its head has a NUL byte or is not UTF-8; a search walks a tree breadth-first without
// following symlinks (a link could lead out of the grant) and stops at a file count, a byte budget
// or a result count, saying which.
import { closeSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

export interface FileHead {
  /** The file's whole size in bytes. */
  size: number;
  binary: boolean;
  /** The first `cap` bytes as text ('' when binary). */
  text: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function readHead(real: string, cap: number): FileHead {
  const fd = openSync(real, 'r');
  try {
    const size = lstatSync(real).size;
    const buffer = Buffer.alloc(Math.min(size, cap));
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, read);
      if (n === 0) break;
      read += n;
    }
    const bytes = buffer.subarray(0, read);
    const text = decode(bytes, size > cap);
    return text === null ? { size, binary: true, text: '' } : { size, binary: false, text };
  } finally {
    closeSync(fd);
  }
}

/** UTF-8 text, or null for binary; a cut head may end inside a character, which is dropped. */
function decode(bytes: Buffer, cut: boolean): string | null {
  if (bytes.includes(0)) return null;
  for (let drop = 0; drop <= (cut ? 3 : 0); drop++) {
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
