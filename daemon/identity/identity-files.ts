// USER.md and SOUL.md in $SVC_HOME (spec 4.5). Created from templates on first start; read on every
// turn, so the content is cached and re-read only when the file's mtime or size changes (a user may
// edit the file by hand while the brain runs). Writes are atomic (STYLE.md 11) and carry revisions.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write';
import { AppError } from '../kernel/errors';
import { MAX_IDENTITY_BYTES, type IdentityFile } from '../../protocol/identity';
import type { IdentityDocuments, IdentityName } from '../kernel/ports';
import { revisionOf, SOUL_TEMPLATE, USER_TEMPLATE } from './identity-text';

export type { IdentityName };

const TEMPLATES: Record<IdentityName, string> = { 'USER.md': USER_TEMPLATE, 'SOUL.md': SOUL_TEMPLATE };

interface Cached {
  mtimeMs: number;
  size: number;
  file: IdentityFile;
}

export class IdentityFiles implements IdentityDocuments {
  private readonly cache = new Map<IdentityName, Cached>();

  constructor(private readonly home: string) {}

  /** Creates missing files from their templates. Returns the names it created. */
  start(): IdentityName[] {
    const created: IdentityName[] = [];
    for (const name of Object.keys(TEMPLATES) as IdentityName[]) {
      if (existsSync(this.path(name))) continue;
      writeFileAtomic(this.path(name), TEMPLATES[name], 0o600);
      created.push(name);
    }
    return created;
  }

  read(name: IdentityName): IdentityFile {
    const path = this.path(name);
    let st;
    try {
      st = statSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // Deleted by hand while running: the template is what the brain would recreate on next start.
      return { content: TEMPLATES[name], revision: revisionOf(TEMPLATES[name]), updated_at: new Date(0).toISOString() };
    }
    const hit = this.cache.get(name);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.file;
    const content = readFileSync(path, 'utf8');
    const file = { content, revision: revisionOf(content), updated_at: st.mtime.toISOString() };
    this.cache.set(name, { mtimeMs: st.mtimeMs, size: st.size, file });
    return file;
  }

  /** Replaces a file. With `expectedRevision`, a file changed since that revision is a 409 CONFLICT. */
  write(name: IdentityName, content: string, expectedRevision?: string): IdentityFile {
    if (Buffer.byteLength(content) > MAX_IDENTITY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', `${name} is limited to ${MAX_IDENTITY_BYTES} bytes`);
    const current = this.read(name);
    if (expectedRevision !== undefined && expectedRevision !== current.revision) {
      throw new AppError('CONFLICT', `${name} changed since revision ${expectedRevision}`, { current_revision: current.revision });
    }
    writeFileAtomic(this.path(name), content, 0o600);
    this.cache.delete(name);
    return this.read(name);
  }

  user(): string {
    return this.read('USER.md').content;
  }

  soul(): string {
    return this.read('SOUL.md').content;
  }

  isTemplate(name: IdentityName): boolean {
    return this.read(name).content === TEMPLATES[name];
  }

  private path(name: IdentityName): string {
    return join(this.home, name);
  }
}
