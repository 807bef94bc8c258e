// The file tools (issue 11), registered by the files capability. Every path goes through the path
// guard (path-guard.ts) against the grants in force at the call, and a refused path fails with the
// guard's reason. The tools then touch only the resolved realpath. Safety levels, which the
// permission plane decides on: reading, listing and searching are passive; writing, editing and
// moving are active; deleting is privileged (docs/files.md).
import { lstatSync, mkdtempSync, readdirSync, renameSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { GrantMode } from '../../protocol/files';
import { defineTool, ToolDenied, ToolFailure, type Tool, type ToolContext } from '../kernel/tool';
import type { ActiveGrant } from './grants';
import { resolveGranted, type ResolvedPath, type ResolveOptions } from './path-guard';
import { readHead, searchTree, type SearchLimits } from './file-search';
import { fingerprint, sha256 } from './checkpoint-blobs';
import type { Checkpoints, FileChange } from './checkpoints';

export const FILE_LIMITS = {
  /**
   * read_file returns at most this many bytes per call, and the model pages on with `offset`: the
   * agent's tool runner cuts any result past 8,000 characters (JSON-escaped), so a larger chunk
   * would reach the model as a cut preview.
   */
  readBytes: 4 * 1024,
  /** write_file content and edit_file's result. */
  writeBytes: 1024 * 1024,
  /** list_directory entries per call (pages on with `offset`), for the same reason. */
  listEntries: 100,
  search: { maxFiles: 5000, maxBytes: 16 * 1024 * 1024, maxFileBytes: 1024 * 1024, maxResults: 30 } satisfies SearchLimits,
} as const;

export interface FileToolDeps {
  grants(): readonly ActiveGrant[];
  /** Where every change is checkpointed before it is made (checkpoints.ts); none in some tests. */
  checkpoints?: Checkpoints;
}

const PathArg = Type.String({ minLength: 1, maxLength: 4096, description: 'Absolute path inside a granted folder' });

export function fileTools(deps: FileToolDeps): Tool[] {
  const guard = (path: string, mode: GrantMode, options?: ResolveOptions): ResolvedPath => {
    const r = resolveGranted(path, deps.grants(), mode, options);
    if (!r.ok) throw r.denied ? new ToolDenied(r.reason) : new ToolFailure(r.reason);
    return r.path;
  };
  const fileAt = (path: string, mode: GrantMode): string => {
    const p = guard(path, mode);
    if (p.kind !== 'file') throw new ToolFailure(`${path}: a directory, not a file`);
    return p.real;
  };
  const notALink = (path: string): void => {
    if (lstatSync(resolve(path)).isSymbolicLink()) throw new ToolFailure(`${path}: a symbolic link; name the path it points to`);
  };
  /** Checkpoints the prior state, makes the change, records what it left (docs/files.md, Checkpoints). */
  const checkpointed = async (ctx: ToolContext, change: FileChange, mutate: () => string | null): Promise<void> => {
    const pending = await deps.checkpoints?.before(ctx, change);
    let left: string | null;
    try {
      left = mutate();
    } catch (err) {
      await pending?.abandon();
      throw err;
    }
    await pending?.done(left);
  };
  return [
    defineTool({
      spec: {
        name: 'read_file',
        description: `Reads a text file in a granted folder, ${FILE_LIMITS.readBytes} bytes per call: continue from next_offset while it is not null. Binary files are described, not returned.`,
        parameters: Type.Object({ path: PathArg, offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Byte offset to start at (next_offset of the previous call)' })) }),
      },
      safety: 'passive',
      run: async ({ path, offset }) => {
        const real = fileAt(path, 'read');
        const chunk = readHead(real, FILE_LIMITS.readBytes, offset ?? 0);
        if (chunk.binary) return { summary: `${path} is a binary file of ${chunk.size} bytes`, data: { path: real, binary: true, size: chunk.size }, sources: [`file:${real}`] };
        const next = chunk.end < chunk.size ? chunk.end : null;
        return {
          summary: `${path}: ${chunk.size} bytes${chunk.start > 0 || next !== null ? `, bytes ${chunk.start}-${chunk.end} shown` : ''}`,
          data: { path: real, content: chunk.text, size: chunk.size, offset: chunk.start, next_offset: next },
          sources: [`file:${real}`],
        };
      },
    }),
    defineTool({
      spec: {
        name: 'list_directory',
        description: `Lists a folder inside a granted folder, ${FILE_LIMITS.listEntries} entries per call: continue from next_offset while it is not null.`,
        parameters: Type.Object({ path: PathArg, offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Entries to skip (next_offset of the previous call)' })) }),
      },
      safety: 'passive',
      run: async ({ path, offset = 0 }) => {
        const p = guard(path, 'read');
        if (p.kind !== 'directory') throw new ToolFailure(`${path}: a file, not a directory`);
        const names = readdirSync(p.real).sort();
        const entries = names.slice(offset, offset + FILE_LIMITS.listEntries).map((name) => describeEntry(p.real, name));
        const next = offset + entries.length < names.length ? offset + entries.length : null;
        return { summary: `${path}: ${names.length} entries${offset > 0 || next !== null ? `, ${entries.length} from ${offset} listed` : ''}`, data: { path: p.real, entries, total: names.length, next_offset: next } };
      },
    }),
    defineTool({
      spec: {
        name: 'search_files',
        description: 'Finds files under a granted folder whose name contains `name` and/or whose text contains `content` (case-insensitive; bounded: files, bytes and results).',
        parameters: Type.Object({ path: PathArg, name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), content: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }),
      },
      safety: 'passive',
      run: async ({ path, name, content }, ctx) => {
        if (name === undefined && content === undefined) throw new ToolFailure('search_files needs a name or a content substring');
        const p = guard(path, 'read');
        if (p.kind !== 'directory') throw new ToolFailure(`${path}: a file, not a directory`);
        const found = searchTree(p.real, { name, content }, FILE_LIMITS.search, ctx.signal);
        return { summary: `${found.matches.length} match${found.matches.length === 1 ? '' : 'es'} under ${path}${found.stopped ? ` (stopped: ${found.stopped})` : ''}`, data: found };
      },
    }),
    defineTool({
      spec: {
        name: 'write_file',
        description: `Writes a text file (creating or replacing it) in a folder granted for writing (up to ${FILE_LIMITS.writeBytes / 1024} KiB).`,
        parameters: Type.Object({ path: PathArg, content: Type.String() }),
      },
      safety: 'active',
      run: async ({ path, content }, ctx) => {
        checkSize(content);
        const p = guard(path, 'write', { mayBeMissing: true });
        if (p.kind === 'directory') throw new ToolFailure(`${path}: a directory, not a file`);
        await checkpointed(ctx, { tool: 'write_file', kind: 'write', path: p.real }, () => {
          writeAtomically(p.real, content);
          return sha256(content);
        });
        return { summary: `${p.kind === null ? 'created' : 'wrote'} ${path} (${Buffer.byteLength(content)} bytes)`, data: { path: p.real, bytes: Buffer.byteLength(content), created: p.kind === null } };
      },
    }),
    defineTool({
      spec: {
        name: 'edit_file',
        description: 'Replaces one exact occurrence of old_text with new_text in a file in a folder granted for writing; fails unless old_text occurs exactly once.',
        parameters: Type.Object({ path: PathArg, old_text: Type.String({ minLength: 1 }), new_text: Type.String() }),
      },
      safety: 'active',
      run: async ({ path, old_text: oldText, new_text: newText }, ctx) => {
        const real = fileAt(path, 'write');
        const head = readHead(real, FILE_LIMITS.writeBytes);
        if (head.binary) throw new ToolFailure(`${path}: a binary file; edit_file changes text only`);
        if (head.size > FILE_LIMITS.writeBytes) throw new ToolFailure(`${path}: larger than ${FILE_LIMITS.writeBytes} bytes; too large to edit`);
        const count = occurrences(head.text, oldText);
        if (count !== 1) throw new ToolFailure(`${path}: old_text ${count === 0 ? 'is not in the file' : 'occurs more than once'}; it must occur exactly once${count === 0 ? ' (copy it exactly, whitespace included)' : ' (include more context)'}`);
        const at = head.text.indexOf(oldText);
        const next = head.text.slice(0, at) + newText + head.text.slice(at + oldText.length);
        checkSize(next);
        await checkpointed(ctx, { tool: 'edit_file', kind: 'edit', path: real }, () => {
          writeAtomically(real, next);
          return sha256(next);
        });
        return { summary: `edited ${path}`, data: { path: real, bytes: Buffer.byteLength(next) } };
      },
    }),
    defineTool({
      spec: {
        name: 'move_file',
        description: 'Moves or renames a file or folder; both places must be in folders granted for writing, and the destination must not exist.',
        parameters: Type.Object({ from: PathArg, to: PathArg }),
      },
      safety: 'active',
      run: async ({ from, to }, ctx) => {
        const source = guard(from, 'write');
        notALink(from);
        const target = guard(to, 'write', { mayBeMissing: true });
        if (target.kind !== null) throw new ToolFailure(`${to}: already exists; move_file does not overwrite`);
        if (source.real === source.grant.path) throw new ToolFailure(`${from}: a granted folder itself cannot be moved`);
        if (source.kind === 'directory' && (target.real + '/').startsWith(source.real + '/')) throw new ToolFailure(`${to}: inside ${from}; a folder cannot move into itself`);
        await checkpointed(ctx, { tool: 'move_file', kind: 'move', path: source.real, to: target.real }, () => {
          try {
            renameSync(source.real, target.real);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'EXDEV') throw new ToolFailure(`${from} → ${to}: different file systems; copy with write_file instead`);
            throw err;
          }
          return source.kind === 'file' ? hashOf(target.real) : null;
        });
        return { summary: `moved ${from} to ${to}`, data: { from: source.real, to: target.real } };
      },
    }),
    defineTool({
      spec: { name: 'delete_file', description: 'Deletes a file, or an empty folder, in a folder granted for writing.', parameters: Type.Object({ path: PathArg }) },
      safety: 'privileged',
      run: async ({ path }, ctx) => {
        const p = guard(path, 'write');
        notALink(path);
        if (p.real === p.grant.path) throw new ToolFailure(`${path}: a granted folder itself cannot be deleted (revoke the grant instead)`);
        if (p.kind === 'directory' && readdirSync(p.real).length > 0) throw new ToolFailure(`${path}: a folder that is not empty; delete its files first`);
        await checkpointed(ctx, { tool: 'delete_file', kind: 'delete', path: p.real }, () => {
          if (p.kind === 'directory') rmdirSync(p.real);
          else unlinkSync(p.real);
          return null;
        });
        return { summary: `deleted ${path}`, data: { path: p.real, kind: p.kind } };
      },
    }),
  ];
}

/** What a move left, as the revert's drift check compares it (checkpoint-blobs.ts fingerprint). */
function hashOf(real: string): string {
  return fingerprint(real, lstatSync(real));
}

function checkSize(content: string): void {
  const bytes = Buffer.byteLength(content);
  if (bytes > FILE_LIMITS.writeBytes) throw new ToolFailure(`content of ${bytes} bytes exceeds the ${FILE_LIMITS.writeBytes}-byte limit of the file tools`);
}

function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1 && count < 2; at = text.indexOf(needle, at + 1)) count++;
  return count;
}

/** Temp file in the same folder, then rename: a crash leaves the old file or the new, never half of one. */
function writeAtomically(real: string, content: string): void {
  const dir = mkdtempSync(join(dirname(real), `.${basename(real)}.svc-`));
  const temp = join(dir, 'new');
  try {
    writeFileSync(temp, content, { flush: true });
    renameSync(temp, real);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function describeEntry(dir: string, name: string): { name: string; kind: string; size: number } {
  const stats = lstatSync(join(dir, name));
  const kind = stats.isSymbolicLink() ? 'symlink' : stats.isDirectory() ? 'directory' : stats.isFile() ? 'file' : 'other';
  return { name, kind, size: stats.isFile() ? stats.size : 0 };
}
