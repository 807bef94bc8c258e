// Checkpoints (issue 11; docs/files.md, Checkpoints): before a file tool changes anything, the prior
// content goes into a blob and a row into index.db, grouped by the turn that caused it; after the
// change, the row gets the hash of what the agent left, which is how a revert later tells a file the
// agent left alone from one changed since (drift). Commands run are recorded as not revertible.
import { lstatSync, readFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../kernel/capability';
import { ToolFailure, type ToolContext } from '../kernel/tool';
import { BLOB_CAP_BYTES, BlobStore } from './checkpoint-blobs';
import { CheckpointLockBusyError } from './checkpoint-lock';
import { CheckpointIndex, type ChangeKind, type EntryKind, type IndexDb, type NewChange } from './checkpoint-index';

export interface CheckpointLimits {
  /** Retention: the newest turns kept… */
  keepTurns: number;
  /** …and none whose last change is older than this. */
  keepMs: number;
}

export const CHECKPOINT_LIMITS: Readonly<CheckpointLimits> = { keepTurns: 200, keepMs: 30 * 24 * 3600 * 1000 };

/** The checkpoint folder of a home, and its two parts. */
export function checkpointPaths(home: string): { dir: string; blobs: string } {
  const dir = join(home, 'checkpoints');
  return { dir, blobs: join(dir, 'blobs') };
}

export interface FileChange {
  tool: string;
  kind: Exclude<ChangeKind, 'command'>;
  path: string;
  to?: string;
}

/** What a recorded change needs once the tool has acted. */
export interface PendingChange {
  /** The tool changed the file system: `afterHash` is sha256 of the file it left (null: none). */
  done(afterHash: string | null): Promise<void>;
  /** The tool failed before changing anything: the row goes. */
  abandon(): Promise<void>;
}

export interface CheckpointsDeps {
  home: string;
  clock: Clock;
  logger: Logger;
  limits?: Partial<CheckpointLimits>;
  /** How long a change waits for the index lock (the CLI may hold it while reverting). */
  waitMs?: number;
}

export class Checkpoints {
  readonly index: CheckpointIndex;
  readonly blobs: BlobStore;
  private readonly limits: CheckpointLimits;
  /** The turn of the last change recorded: retention runs when the turn changes, not on every change. */
  private lastTurn: string | null = null;

  constructor(private readonly deps: CheckpointsDeps) {
    const paths = checkpointPaths(deps.home);
    this.blobs = new BlobStore(paths.blobs);
    this.limits = { ...CHECKPOINT_LIMITS, ...deps.limits };
    this.index = new CheckpointIndex(paths.dir, {
      ...(deps.waitMs === undefined ? {} : { waitMs: deps.waitMs }),
      onRecovery: (r) => deps.logger.warn({ recovery: r }, 'checkpoint index: cleared what a killed process left'),
    });
  }

  /** Saves what is at the path(s) now and records the change, before the tool acts. */
  async before(ctx: Pick<ToolContext, 'sessionId' | 'turnId'>, change: FileChange): Promise<PendingChange> {
    return this.pending(
      await this.record((db) => {
        this.retain(db, ctx.turnId);
        return db.insert(this.row(ctx, change));
      }),
    );
  }

  /** A command: recorded as not revertible, with its argv and working folder. */
  async command(ctx: Pick<ToolContext, 'sessionId' | 'turnId'>, argv: readonly string[], cwd: string): Promise<PendingChange> {
    return this.pending(
      await this.record((db) => {
        this.retain(db, ctx.turnId);
        return db.insert({ ...this.base(ctx, 'run_command', 'command', cwd), entry: 'directory', prior_blob: null, prior_mode: null, revertible: 0, note: JSON.stringify(argv) });
      }),
    );
  }

  /** No checkpoint, no change: a busy index fails the tool call (the model hears why) before it acts. */
  private async record(fn: (db: IndexDb) => number): Promise<number> {
    try {
      return await this.index.useAsync(fn);
    } catch (err) {
      if (err instanceof CheckpointLockBusyError) throw new ToolFailure(`${err.message}; nothing was changed`);
      throw err;
    }
  }

  private pending(id: number): PendingChange {
    return {
      done: async (afterHash) => {
        try {
          await this.index.useAsync((db) => db.finish(id, afterHash));
        } catch (err) {
          // The change is made and its prior state is safe; the row stays `pending`, which a revert
          // treats as drifted unless the file holds its prior content again. Not the tool's failure.
          if (!(err instanceof CheckpointLockBusyError)) throw err;
          this.deps.logger.warn({ err, id }, 'checkpoint index busy: a change stays recorded as pending');
        }
      },
      abandon: () => this.index.useAsync((db) => db.drop(id)),
    };
  }

  private base(ctx: Pick<ToolContext, 'sessionId' | 'turnId'>, tool: string, kind: ChangeKind, path: string): Pick<NewChange, 'turn_id' | 'session_id' | 'at' | 'tool' | 'kind' | 'path' | 'to_path'> {
    return { turn_id: ctx.turnId, session_id: ctx.sessionId, at: new Date(this.deps.clock.now()).toISOString(), tool, kind, path, to_path: null };
  }

  /** Reads the prior state; the content goes into a blob unless it is past the cap. */
  private row(ctx: Pick<ToolContext, 'sessionId' | 'turnId'>, c: FileChange): NewChange {
    const st = lstatSync(c.path, { throwIfNoEntry: false });
    const entry = entryOf(st);
    const base = { ...this.base(ctx, c.tool, c.kind, c.path), to_path: c.to ?? null, entry, prior_mode: st ? st.mode & 0o7777 : null };
    if (entry !== 'file' || !st) return { ...base, prior_blob: null, revertible: 1, note: null };
    if (st.size > BLOB_CAP_BYTES) {
      // A move is still undone by moving back; only a forced revert of a drifted one needs the content.
      const note = `${st.size} bytes: larger than the ${BLOB_CAP_BYTES}-byte checkpoint cap, prior content not kept`;
      return { ...base, prior_blob: null, revertible: c.kind === 'move' ? 1 : 0, note };
    }
    return { ...base, prior_blob: this.blobs.put(readFileSync(c.path)), revertible: 1, note: null };
  }

  /** Retention, when a change of another turn than the last comes: old turns go, then unreferenced blobs. */
  private retain(db: IndexDb, turnId: string): void {
    if (this.lastTurn === turnId) return;
    this.lastTurn = turnId;
    const before = new Date(this.deps.clock.now() - this.limits.keepMs).toISOString();
    const pruned = db.prune(this.limits.keepTurns, before);
    const collected = this.blobs.gc(db.referencedBlobs());
    if (pruned > 0 || collected > 0) this.deps.logger.info({ pruned, collected }, 'checkpoint retention: old turns and unreferenced blobs removed');
  }
}

function entryOf(st: Stats | undefined): EntryKind {
  if (!st) return 'absent';
  return st.isDirectory() ? 'directory' : 'file';
}
