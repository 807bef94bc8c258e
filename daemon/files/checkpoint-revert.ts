// Reverting a checkpointed turn (docs/files.md, Checkpoints): the plan walks the turn's changes newest
// first over a view of the file system in which every earlier step has been applied, so each change
// is compared with what the revert of the later ones leaves. A step is
//   revert        the path holds what the agent left: put the prior state back;
//   in place      the path already holds the prior state (nothing to do);
//   drifted       it holds something else: reverted only with --force, which discards the newer content;
//   blocked       cannot be reverted even with --force (a folder where a file was, content not kept);
//   not revertible  a command, or a file past the checkpoint cap;
//   reverted      already reverted by an earlier undo.
// `undo` without --force refuses the whole turn when any step is drifted or blocked; nothing changes.
import { chmodSync, lstatSync, mkdirSync, renameSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write';
import { fingerprint, type BlobStore } from './checkpoint-blobs';
import type { ChangeRow, CheckpointIndex, IndexDb } from './checkpoint-index';

export type StepStatus = 'revert' | 'in place' | 'drifted' | 'blocked' | 'not revertible' | 'reverted';

export interface RevertStep {
  change: ChangeRow;
  status: StepStatus;
  /** One line: what the revert does, or why it cannot. */
  action: string;
}

export interface RevertPlan {
  turnId: string;
  steps: RevertStep[];
}

export interface RevertResult {
  plan: RevertPlan;
  /** True when nothing was changed because of drifted or blocked steps (no --force). */
  refused: boolean;
  applied: RevertStep[];
  /** Steps skipped even with --force (blocked). */
  skipped: RevertStep[];
}

type Entry = { kind: 'absent' } | { kind: 'directory' } | { kind: 'file'; hash: string } | { kind: 'other' };

function entryAt(path: string): Entry {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st) return { kind: 'absent' };
  if (st.isDirectory()) return { kind: 'directory' };
  if (st.isFile()) return { kind: 'file', hash: fingerprint(path, st) };
  return { kind: 'other' };
}

const same = (a: Entry, b: Entry): boolean => a.kind === b.kind && (a.kind !== 'file' || (b.kind === 'file' && a.hash === b.hash));
const describe = (e: Entry): string => (e.kind === 'file' ? 'a file with other content' : e.kind === 'absent' ? 'missing' : e.kind === 'directory' ? 'a folder' : 'not a regular file');

const within = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);

type ViewOp = { op: 'set'; path: string; entry: Entry } | { op: 'move'; from: string; to: string };

/**
 * The file system as the plan sees it: the real one, after the steps planned so far. Each step is a
 * log entry; a path is resolved from the newest entry back: a folder moved back (`to` → `from`) sends
 * paths under `from` to where they are now, and empties `to`; a path set (restored, recreated,
 * deleted) holds its new entry, and has no children.
 */
class View {
  private readonly log: ViewOp[] = [];
  get(path: string): Entry {
    let p = path;
    for (let i = this.log.length - 1; i >= 0; i--) {
      const op = this.log[i]!;
      if (op.op === 'set') {
        if (op.path === p) return op.entry;
        if (within(p, op.path)) return { kind: 'absent' };
      } else if (within(p, op.from)) p = op.to + p.slice(op.from.length);
      else if (within(p, op.to)) return { kind: 'absent' };
    }
    return entryAt(p);
  }
  set(path: string, entry: Entry): void {
    this.log.push({ op: 'set', path, entry });
  }
  /** What is at `to` goes back to `from`. */
  moveBack(from: string, to: string): void {
    this.log.push({ op: 'move', from, to });
  }
}

/** The prior state of the changed path, as the revert puts it back (null: content not kept). */
function priorOf(c: ChangeRow): Entry | null {
  if (c.entry === 'absent') return { kind: 'absent' };
  if (c.entry === 'directory') return { kind: 'directory' };
  return c.prior_blob === null ? null : { kind: 'file', hash: c.prior_blob };
}

/** What the agent left at `path` (write, edit) or at `to_path` (move); null when unknown. */
function leftOf(c: ChangeRow): Entry | null {
  if (c.state !== 'done') return null; // interrupted: the change may or may not have happened
  if (c.kind === 'delete') return { kind: 'absent' };
  if (c.kind === 'move' && c.entry === 'directory') return { kind: 'directory' };
  return c.after_hash === null ? null : { kind: 'file', hash: c.after_hash };
}

function planStep(c: ChangeRow, view: View): RevertStep {
  if (c.reverted_at !== null) return { change: c, status: 'reverted', action: `reverted at ${c.reverted_at}` };
  if (c.revertible === 0) return { change: c, status: 'not revertible', action: c.kind === 'command' ? `ran ${c.note ?? ''} in ${c.path}` : (c.note ?? 'not revertible') };
  return c.kind === 'move' ? planMove(c, view) : planInPlace(c, view);
}

/** write, edit, delete: the path itself goes back to its prior state. */
function planInPlace(c: ChangeRow, view: View): RevertStep {
  const prior = priorOf(c);
  const now = view.get(c.path);
  const left = leftOf(c);
  if (prior === null) return { change: c, status: 'blocked', action: 'prior content not kept' };
  const action = prior.kind === 'absent' ? `delete ${c.path} (created by ${c.tool})` : prior.kind === 'directory' ? `recreate the folder ${c.path}` : `restore ${c.path} (${c.tool})`;
  if (same(now, prior) || (prior.kind === 'directory' && now.kind === 'directory')) return { change: c, status: 'in place', action: `${c.path} already holds its prior state` };
  view.set(c.path, prior);
  if (left !== null && same(now, left)) return { change: c, status: 'revert', action };
  if (now.kind === 'directory' || now.kind === 'other') return { change: c, status: 'blocked', action: `${c.path} is now ${describe(now)}; not touched even with --force` };
  return { change: c, status: 'drifted', action: `${action}: changed after the agent's turn, now ${describe(now)} (--force discards that)` };
}

/** move: what is at `to_path` goes back to `path`. */
function planMove(c: ChangeRow, view: View): RevertStep {
  const to = c.to_path ?? '';
  const prior = priorOf(c);
  const [now, nowTo] = [view.get(c.path), view.get(to)];
  const left = leftOf(c);
  const action = `move ${to} back to ${c.path}`;
  if (nowTo.kind === 'absent' && prior !== null && (same(now, prior) || (prior.kind === 'directory' && now.kind === 'directory'))) {
    return { change: c, status: 'in place', action: `${c.path} is already back` };
  }
  if (now.kind === 'absent' && left !== null && same(nowTo, left)) {
    view.moveBack(c.path, to);
    return { change: c, status: 'revert', action };
  }
  // Drifted: forced, a file is put back from its blob; a folder cannot be rebuilt.
  if (c.entry !== 'file' || prior === null || now.kind === 'directory' || now.kind === 'other' || nowTo.kind === 'directory' || nowTo.kind === 'other') {
    return { change: c, status: 'blocked', action: `${action}: ${c.path} is ${describe(now)} and ${to} is ${describe(nowTo)}; not touched even with --force` };
  }
  view.set(c.path, prior);
  view.set(to, { kind: 'absent' });
  return { change: c, status: 'drifted', action: `${action}: changed after the agent's turn, ${to} now ${describe(nowTo)} (--force restores the moved content and removes that)` };
}

export function planTurn(changes: readonly ChangeRow[], turnId: string): RevertPlan {
  const view = new View();
  return { turnId, steps: [...changes].sort((a, b) => b.id - a.id).map((c) => planStep(c, view)) };
}

/** Applies one step (revert or forced drifted) to the file system. */
function applyStep(step: RevertStep, blobs: BlobStore): void {
  const c = step.change;
  if (c.kind === 'move') {
    const to = c.to_path ?? '';
    if (step.status === 'revert') {
      mkdirSync(dirname(c.path), { recursive: true });
      renameSync(to, c.path);
      return;
    }
    restoreFile(c, blobs);
    if (lstatSync(to, { throwIfNoEntry: false })?.isFile()) unlinkSync(to);
    return;
  }
  if (c.entry === 'absent') {
    // The plan blocks a folder here; only a file the agent created (or one in its place) is removed.
    if (lstatSync(c.path, { throwIfNoEntry: false })) unlinkSync(c.path);
    return;
  }
  if (c.entry === 'directory') {
    if (lstatSync(c.path, { throwIfNoEntry: false })) unlinkSync(c.path); // a file where the folder was (forced)
    mkdirSync(c.path, { recursive: true });
    if (c.prior_mode !== null) chmodSync(c.path, c.prior_mode); // exactly, whatever the umask
    return;
  }
  restoreFile(c, blobs);
}

function restoreFile(c: ChangeRow, blobs: BlobStore): void {
  if (c.prior_blob === null) throw new Error(`${c.path}: prior content not kept`);
  mkdirSync(dirname(c.path), { recursive: true });
  writeFileAtomic(c.path, blobs.get(c.prior_blob), c.prior_mode ?? 0o644);
}

/** The plan of a turn (default: the latest checkpointed one); null when there is no such turn. */
export function showTurn(db: IndexDb, turnId: string | undefined): RevertPlan | null {
  const id = turnId ?? db.latestTurn();
  if (id === null) return null;
  const changes = db.changes(id);
  return changes.length === 0 ? null : planTurn(changes, id);
}

/**
 * Reverts a turn under the index lock (the brain's next change waits): the plan, the file changes and
 * the reverted marks happen with nobody else recording. Returns null when there is no such turn.
 */
export function undoTurn(index: CheckpointIndex, blobs: BlobStore, turnId: string | undefined, force: boolean, now: () => Date = () => new Date()): RevertResult | null {
  return index.use((db) => {
    const plan = showTurn(db, turnId);
    if (plan === null) return null;
    const stuck = plan.steps.filter((s) => s.status === 'drifted' || s.status === 'blocked');
    if (stuck.length > 0 && !force) return { plan, refused: true, applied: [], skipped: stuck };
    const applied: RevertStep[] = [];
    const done: number[] = [];
    for (const step of plan.steps) {
      if (step.status === 'revert' || step.status === 'drifted') {
        applyStep(step, blobs);
        applied.push(step);
      }
      if (step.status === 'revert' || step.status === 'drifted' || step.status === 'in place') done.push(step.change.id);
    }
    db.markReverted(done, now().toISOString());
    return { plan, refused: false, applied, skipped: plan.steps.filter((s) => s.status === 'blocked') };
  });
}
