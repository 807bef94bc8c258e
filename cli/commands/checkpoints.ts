// svc checkpoints [show|undo] (issue 11; docs/files.md, Checkpoints): the turns whose file changes were
// checkpointed, the revert plan of one, and its revert. It reads $SVC_HOME/checkpoints/index.db itself,
// never the REST API, so it works with the brain running or stopped; the index's lock
// (daemon/files/checkpoint-lock.ts) keeps it from ever touching a transaction of the running brain.
//   svc checkpoints [--json]                        the checkpointed turns, newest first
//   svc checkpoints show [TURN_ID] [--json]         the revert plan; changes nothing
//   svc checkpoints undo [TURN_ID] [--force] [--json]  reverts (refuses drifted files unless --force)
import type { Sade } from 'sade';
import type { BlobStore } from '../../daemon/files/checkpoint-blobs';
import type { CheckpointIndex } from '../../daemon/files/checkpoint-index';
import type { RevertPlan, RevertStep } from '../../daemon/files/checkpoint-revert';
import { table, type CommandContext } from './key';

type Opts = Record<string, unknown>;

export interface CheckpointIo {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

const LIST_LIMIT = 50;

/**
 * The checkpoint modules load when a checkpoints command runs: every other svc command (and `svc
 * serve` until the first file change) then never evaluates SQLite's WebAssembly for them.
 */
async function load() {
  const [blobs, index, lock, revert, checkpoints] = await Promise.all([
    import('../../daemon/files/checkpoint-blobs'),
    import('../../daemon/files/checkpoint-index'),
    import('../../daemon/files/checkpoint-lock'),
    import('../../daemon/files/checkpoint-revert'),
    import('../../daemon/files/checkpoints'),
  ]);
  return {
    open(home: string): { index: CheckpointIndex; blobs: BlobStore } {
      const paths = checkpoints.checkpointPaths(home);
      return { index: new index.CheckpointIndex(paths.dir), blobs: new blobs.BlobStore(paths.blobs) };
    },
    showTurn: revert.showTurn,
    undoTurn: revert.undoTurn,
    /** The lock wait ran out (a live process holds the index): one line, exit 1. */
    guarded(io: CheckpointIo, fn: () => number): number {
      try {
        return fn();
      } catch (err) {
        if (!(err instanceof lock.CheckpointLockBusyError)) throw err;
        io.err.write(`svc: ${err.message}\n`);
        return 1;
      }
    },
  };
}

export async function checkpointsList(home: string, io: CheckpointIo, args: { json: boolean }): Promise<number> {
  const m = await load();
  const { index } = m.open(home);
  return m.guarded(io, () => {
    const turns = index.exists() ? index.use((db) => db.turns(LIST_LIMIT)) : [];
    if (args.json) io.out.write(`${JSON.stringify(turns)}\n`);
    else if (turns.length === 0) io.out.write('no checkpoints: the assistant has not changed any file\n');
    else {
      const state = (t: (typeof turns)[number]): string => {
        const revertible = t.changes - t.not_revertible;
        const s = t.reverted === 0 ? '' : t.reverted >= revertible ? 'reverted' : `${t.reverted} reverted`;
        return [s, t.not_revertible > 0 ? `${t.not_revertible} not revertible` : ''].filter(Boolean).join(', ') || '-';
      };
      io.out.write(table([['TURN', 'SESSION', 'LAST CHANGE', 'CHANGES', 'STATE'], ...turns.map((t) => [t.turn_id, t.session_id, t.last_at, String(t.changes), state(t)])]));
    }
    return 0;
  });
}

const stepJson = (s: RevertStep) => ({
  id: s.change.id,
  at: s.change.at,
  tool: s.change.tool,
  kind: s.change.kind,
  path: s.change.path,
  ...(s.change.to_path === null ? {} : { to: s.change.to_path }),
  status: s.status,
  action: s.action,
});

const stepLine = (s: RevertStep): string => `  ${s.status.padEnd(14)}  ${s.action}\n`;

function noTurn(io: CheckpointIo, turnId: string | undefined): number {
  io.err.write(turnId === undefined ? 'svc: no checkpoints: the assistant has not changed any file\n' : `svc: no checkpoints for turn ${turnId} (list them with: svc checkpoints)\n`);
  return 1;
}

const alreadyReverted = (plan: RevertPlan): boolean => plan.steps.some((s) => s.status === 'reverted') && plan.steps.every((s) => s.status === 'reverted' || s.status === 'not revertible');

export async function checkpointsShow(home: string, io: CheckpointIo, args: { turnId?: string | undefined; json: boolean }): Promise<number> {
  const m = await load();
  const { index } = m.open(home);
  return m.guarded(io, () => {
    const plan = index.exists() ? index.use((db) => m.showTurn(db, args.turnId)) : null;
    if (plan === null) return noTurn(io, args.turnId);
    if (args.json) {
      io.out.write(`${JSON.stringify({ turn_id: plan.turnId, already_reverted: alreadyReverted(plan), steps: plan.steps.map(stepJson) })}\n`);
      return 0;
    }
    io.out.write(`turn ${plan.turnId}: revert plan, newest change first (nothing has been changed)\n`);
    for (const s of plan.steps) io.out.write(stepLine(s));
    if (alreadyReverted(plan)) io.out.write('this turn was already reverted\n');
    else if (plan.steps.some((s) => s.status === 'drifted')) io.out.write(`drifted files changed after the agent's turn; svc checkpoints undo ${plan.turnId} --force discards those changes\n`);
    return 0;
  });
}

export async function checkpointsUndo(home: string, io: CheckpointIo, args: { turnId?: string | undefined; force: boolean; json: boolean }): Promise<number> {
  const m = await load();
  const { index, blobs } = m.open(home);
  return m.guarded(io, () => {
    const r = index.exists() ? m.undoTurn(index, blobs, args.turnId, args.force) : null;
    if (r === null) return noTurn(io, args.turnId);
    const { plan } = r;
    const already = alreadyReverted(plan);
    if (args.json) {
      io.out.write(`${JSON.stringify({ turn_id: plan.turnId, refused: r.refused, already_reverted: already, applied: r.applied.map(stepJson), skipped: r.skipped.map(stepJson), steps: plan.steps.map(stepJson) })}\n`);
      return r.refused || r.skipped.length > 0 ? 1 : 0;
    }
    if (r.refused) {
      io.err.write(`svc: turn ${plan.turnId} not reverted; nothing was changed. These changed after the agent's turn:\n`);
      for (const s of r.skipped) io.err.write(stepLine(s));
      if (r.skipped.some((s) => s.status === 'drifted')) io.err.write(`To discard the newer content and revert anyway: svc checkpoints undo ${plan.turnId} --force\n`);
      return 1;
    }
    if (already) {
      io.out.write(`turn ${plan.turnId} was already reverted; nothing to do\n`);
      return 0;
    }
    io.out.write(`turn ${plan.turnId} reverted:\n`);
    for (const s of plan.steps) if (s.status !== 'reverted') io.out.write(stepLine(s));
    if (r.skipped.length > 0) {
      io.err.write(`svc: ${r.skipped.length} change${r.skipped.length === 1 ? '' : 's'} could not be reverted even with --force (above, "blocked")\n`);
      return 1;
    }
    return 0;
  });
}

export function registerCheckpointCommands(prog: Sade, ctx: CommandContext): void {
  const home = (o: Opts): string => ctx.conn(o).home;
  const turn = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);
  prog
    .command('checkpoints', "The turns whose file changes were checkpointed (show, undo); reads $SVC_HOME/checkpoints, brain running or not")
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await checkpointsList(home(o), ctx, { json: o.json === true })));
  prog
    .command('checkpoints show [turn]', 'The revert plan of a turn (default: the latest); changes nothing')
    .option('--json', 'Machine-readable output')
    .action(async (t: unknown, o: Opts) => ctx.exit(await checkpointsShow(home(o), ctx, { turnId: turn(t), json: o.json === true })));
  prog
    .command('checkpoints undo [turn]', "Revert a turn's file changes (default: the latest); files changed since are refused unless --force")
    .option('--force', 'Also revert files changed after the turn, discarding the newer content')
    .option('--json', 'Machine-readable output')
    .action(async (t: unknown, o: Opts) => ctx.exit(await checkpointsUndo(home(o), ctx, { turnId: turn(t), force: o.force === true, json: o.json === true })));
}
