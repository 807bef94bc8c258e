// TaskFlows in the brain's store (docs/taskflows.md "Durability"): a row per flow, a row per step, and
// a row per status change — the timeline. Every change is one write transaction that first reads the
// statuses it changes and refuses a transition the state machine (flow-machine.ts) does not allow, so
// two racing changes (a cancel and a completion) cannot both land: the second sees the first's state.
// The write resolves once it is durable; the engine makes a change visible (bus, frames) only after.
import { randomBytes } from 'node:crypto';
import type { CapabilityContext, Clock, Db, Migration } from '../kernel/capability';
import type { CreateTaskflow, FlowStatus, Step, StepSpec, StepStatus, Taskflow, TaskflowSummary, Transition } from '../../protocol/taskflows';
import { canFlow, canStep, TransitionError } from './flow-machine';

type Store = CapabilityContext['store'];

export const TASKFLOW_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'taskflows, their steps and their timeline',
    up: `CREATE TABLE taskflows (
      id TEXT PRIMARY KEY,
      title TEXT NOT NULL,
      session_id TEXT NOT NULL,
      status TEXT NOT NULL,
      current_step INTEGER,
      context TEXT NOT NULL,
      error TEXT,
      wait_until REAL,
      created_at REAL NOT NULL,
      updated_at REAL NOT NULL,
      started_at REAL,
      completed_at REAL,
      schedule TEXT,
      timezone TEXT,
      parent_id TEXT,
      runs INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX taskflows_status ON taskflows (status, created_at);
    CREATE INDEX taskflows_session ON taskflows (session_id, created_at);
    CREATE TABLE taskflow_steps (
      flow_id TEXT NOT NULL,
      idx INTEGER NOT NULL,
      type TEXT NOT NULL,
      input TEXT NOT NULL,
      status TEXT NOT NULL,
      result TEXT,
      error TEXT,
      started_at REAL,
      finished_at REAL,
      approval_request_id TEXT,
      wait_until REAL,
      loops INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (flow_id, idx)
    );
    CREATE INDEX taskflow_steps_approval ON taskflow_steps (approval_request_id) WHERE approval_request_id IS NOT NULL;
    CREATE TABLE taskflow_transitions (
      flow_id TEXT NOT NULL,
      step INTEGER,
      from_status TEXT,
      to_status TEXT NOT NULL,
      at REAL NOT NULL,
      reason TEXT NOT NULL
    );
    CREATE INDEX taskflow_transitions_flow ON taskflow_transitions (flow_id);`,
  },
];

/** Columns of a flow a change may set besides its status. */
export interface FlowFields {
  current_step?: number | null;
  error?: string | null;
  wait_until?: number | null;
  runs?: number;
}

/** Columns of a step a change may set besides its status. */
export interface StepFields {
  result?: unknown;
  error?: string | null;
  approval_request_id?: string | null;
  wait_until?: number | null;
  loops?: number;
}

export interface StepChange {
  index: number;
  to: StepStatus;
  reason: string;
  set?: StepFields;
}

export interface FlowChange {
  /** The new status; absent (or the current one) changes fields only, without a timeline row. */
  to?: FlowStatus;
  reason: string;
  set?: FlowFields;
}

export interface Change {
  flow?: FlowChange;
  steps?: readonly StepChange[];
  /** Refuses the whole change (TransitionError) unless the flow is in one of these states now. */
  expect?: readonly FlowStatus[];
}

/** The engine's working view of a step (the input as created, before templates are resolved). */
export interface StepRow {
  index: number;
  type: StepSpec['type'];
  input: StepSpec;
  status: StepStatus;
  result: unknown;
  error: string | null;
  approval_request_id: string | null;
  wait_until: number | null;
  loops: number;
}

export interface FlowRow {
  id: string;
  title: string;
  session_id: string;
  status: FlowStatus;
  current_step: number | null;
  context: Record<string, unknown>;
  error: string | null;
  wait_until: number | null;
  schedule: string | null;
  timezone: string | null;
  parent_id: string | null;
  runs: number;
  created_at: number;
}

interface FlowDbRow extends Omit<FlowRow, 'context'> {
  context: string;
  updated_at: number;
  started_at: number | null;
  completed_at: number | null;
}

interface StepDbRow {
  idx: number;
  type: StepSpec['type'];
  input: string;
  status: StepStatus;
  result: string | null;
  error: string | null;
  started_at: number | null;
  finished_at: number | null;
  approval_request_id: string | null;
  wait_until: number | null;
  loops: number;
}

interface TransitionDbRow {
  step: number | null;
  from_status: string | null;
  to_status: string;
  at: number;
  reason: string;
}

const FLOW_COLUMNS = 'id, title, session_id, status, current_step, context, error, wait_until, created_at, updated_at, started_at, completed_at, schedule, timezone, parent_id, runs';
const FINISHED_STEP: ReadonlySet<StepStatus> = new Set(['succeeded', 'failed', 'skipped', 'unknown']);
const FINISHED_FLOW: ReadonlySet<FlowStatus> = new Set(['completed', 'failed', 'cancelled']);

export const newFlowId = (): string => `flw_${randomBytes(12).toString('base64url')}`;

export class FlowStore {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  private now(): number {
    return this.clock.now() / 1000;
  }

  /** Creates a flow and its steps in one transaction; `status` is queued, or waiting for a schedule's first occurrence. */
  async insert(input: CreateTaskflow & { session_id: string }, opts: { status: FlowStatus; waitUntil: number | null; parentId?: string; reason: string }): Promise<string> {
    const id = newFlowId();
    const at = this.now();
    await this.store.write((db) => {
      db.run(`INSERT INTO taskflows (${FLOW_COLUMNS}) VALUES (?, ?, ?, ?, NULL, ?, NULL, ?, ?, ?, NULL, NULL, ?, ?, ?, 0)`, [
        id,
        input.title,
        input.session_id,
        opts.status,
        JSON.stringify(input.context ?? {}),
        opts.waitUntil,
        at,
        at,
        input.schedule ?? null,
        input.timezone ?? null,
        opts.parentId ?? null,
      ]);
      input.steps.forEach((step, idx) => db.run('INSERT INTO taskflow_steps (flow_id, idx, type, input, status) VALUES (?, ?, ?, ?, ?)', [id, idx, step.type, JSON.stringify(step), 'pending']));
      db.run('INSERT INTO taskflow_transitions (flow_id, step, from_status, to_status, at, reason) VALUES (?, NULL, NULL, ?, ?, ?)', [id, opts.status, at, opts.reason]);
    });
    return id;
  }

  /**
   * One occurrence of a scheduled flow, atomically: a new run (queued, the parent's steps and context,
   * parent_id set) and the parent's next occurrence. Null `next` ends the schedule (the parent completes).
   */
  async spawnRun(parentId: string, next: number | null, reason: string): Promise<string | null> {
    const id = newFlowId();
    const at = this.now();
    return this.store.write((db) => {
      const parent = db.get<FlowDbRow>(`SELECT ${FLOW_COLUMNS} FROM taskflows WHERE id = ?`, [parentId]);
      if (!parent || parent.status !== 'waiting') return null;
      db.run(`INSERT INTO taskflows (${FLOW_COLUMNS}) VALUES (?, ?, ?, 'queued', NULL, ?, NULL, NULL, ?, ?, NULL, NULL, NULL, NULL, ?, 0)`, [id, parent.title, parent.session_id, parent.context, at, at, parentId]);
      db.run("INSERT INTO taskflow_steps (flow_id, idx, type, input, status) SELECT ?, idx, type, input, 'pending' FROM taskflow_steps WHERE flow_id = ?", [id, parentId]);
      db.run('INSERT INTO taskflow_transitions (flow_id, step, from_status, to_status, at, reason) VALUES (?, NULL, NULL, ?, ?, ?)', [id, 'queued', at, `run ${parent.runs + 1} of scheduled flow ${parentId}`]);
      this.applyIn(db, parentId, next === null ? { flow: { to: 'completed', reason: 'the schedule has no further occurrence', set: { wait_until: null, runs: parent.runs + 1 } } } : { flow: { reason, set: { wait_until: next, runs: parent.runs + 1 } } });
      return id;
    });
  }

  /** Applies `change` atomically, or throws TransitionError and changes nothing. */
  async apply(flowId: string, change: Change): Promise<void> {
    await this.store.write((db) => this.applyIn(db, flowId, change));
  }

  private applyIn(db: Db, flowId: string, change: Change): void {
    const at = this.now();
    const current = db.get<{ status: FlowStatus }>('SELECT status FROM taskflows WHERE id = ?', [flowId]);
    if (!current) throw new TransitionError('flow', 'missing', change.flow?.to ?? 'changed');
    if (change.expect && !change.expect.includes(current.status)) throw new TransitionError('flow', current.status, change.flow?.to ?? 'changed');
    for (const step of change.steps ?? []) {
      const row = db.get<{ status: StepStatus }>('SELECT status FROM taskflow_steps WHERE flow_id = ? AND idx = ?', [flowId, step.index]);
      if (!row) throw new TransitionError('step', 'missing', step.to);
      if (row.status !== step.to && !canStep(row.status, step.to)) throw new TransitionError('step', row.status, step.to);
    }
    const to = change.flow?.to;
    if (to !== undefined && to !== current.status && !canFlow(current.status, to)) throw new TransitionError('flow', current.status, to);

    for (const step of change.steps ?? []) {
      const row = db.get<{ status: StepStatus }>('SELECT status FROM taskflow_steps WHERE flow_id = ? AND idx = ?', [flowId, step.index])!;
      const sets: string[] = ['status = ?'];
      const params: (string | number | null)[] = [step.to];
      if (step.to === 'running' && row.status !== 'running') {
        sets.push('started_at = ?');
        params.push(at);
      }
      if (step.to === 'pending') sets.push('started_at = NULL', 'finished_at = NULL', 'result = NULL', 'error = NULL', 'approval_request_id = NULL', 'wait_until = NULL');
      if (FINISHED_STEP.has(step.to)) {
        sets.push('finished_at = ?');
        params.push(at);
      }
      for (const [key, value] of Object.entries(step.set ?? {})) {
        sets.push(`${key} = ?`);
        params.push(key === 'result' ? (value === undefined ? null : JSON.stringify(value)) : (value as string | number | null));
      }
      db.run(`UPDATE taskflow_steps SET ${sets.join(', ')} WHERE flow_id = ? AND idx = ?`, [...params, flowId, step.index]);
      if (row.status !== step.to) db.run('INSERT INTO taskflow_transitions (flow_id, step, from_status, to_status, at, reason) VALUES (?, ?, ?, ?, ?, ?)', [flowId, step.index, row.status, step.to, at, step.reason]);
    }

    const sets: string[] = ['updated_at = ?'];
    const params: (string | number | null)[] = [at];
    if (to !== undefined && to !== current.status) {
      sets.push('status = ?');
      params.push(to);
      if (to === 'running') {
        sets.push('started_at = COALESCE(started_at, ?)');
        params.push(at);
      }
      if (FINISHED_FLOW.has(to)) {
        sets.push('completed_at = ?');
        params.push(at);
      }
      if (to === 'queued' || to === 'running') sets.push('completed_at = NULL');
    }
    for (const [key, value] of Object.entries(change.flow?.set ?? {})) {
      sets.push(`${key} = ?`);
      params.push(value as string | number | null);
    }
    db.run(`UPDATE taskflows SET ${sets.join(', ')} WHERE id = ?`, [...params, flowId]);
    if (to !== undefined && to !== current.status) db.run('INSERT INTO taskflow_transitions (flow_id, step, from_status, to_status, at, reason) VALUES (?, NULL, ?, ?, ?, ?)', [flowId, current.status, to, at, change.flow!.reason]);
  }

  flow(id: string): FlowRow | undefined {
    const row = this.store.get<FlowDbRow>(`SELECT ${FLOW_COLUMNS} FROM taskflows WHERE id = ?`, [id]);
    return row ? flowRow(row) : undefined;
  }

  steps(flowId: string): StepRow[] {
    return this.store.all<StepDbRow>('SELECT idx, type, input, status, result, error, started_at, finished_at, approval_request_id, wait_until, loops FROM taskflow_steps WHERE flow_id = ? ORDER BY idx', [flowId]).map(stepRow);
  }

  step(flowId: string, index: number): StepRow | undefined {
    const row = this.store.get<StepDbRow>('SELECT idx, type, input, status, result, error, started_at, finished_at, approval_request_id, wait_until, loops FROM taskflow_steps WHERE flow_id = ? AND idx = ?', [flowId, index]);
    return row ? stepRow(row) : undefined;
  }

  /** The flow with every step and the whole timeline (GET /api/taskflows/{id}). */
  get(id: string): Taskflow | undefined {
    const row = this.store.get<FlowDbRow>(`SELECT ${FLOW_COLUMNS} FROM taskflows WHERE id = ?`, [id]);
    if (!row) return undefined;
    const transitions = this.store.all<TransitionDbRow>('SELECT step, from_status, to_status, at, reason FROM taskflow_transitions WHERE flow_id = ? ORDER BY rowid', [id]);
    const history = (step: number | null): Transition[] =>
      transitions.filter((t) => t.step === step).map((t) => ({ from: t.from_status as Transition['from'], to: t.to_status as Transition['to'], at: t.at, reason: t.reason }));
    const steps = this.store.all<StepDbRow>('SELECT idx, type, input, status, result, error, started_at, finished_at, approval_request_id, wait_until, loops FROM taskflow_steps WHERE flow_id = ? ORDER BY idx', [id]);
    return {
      ...summary(row),
      history: history(null),
      steps: steps.map((s): Step => {
        const { index, type, input, status, result, error, approval_request_id } = stepRow(s);
        return { id: `${id}:${index}`, index, type, input, status, result, error, started_at: s.started_at, finished_at: s.finished_at, approval_request_id, history: history(index) };
      }),
    };
  }

  list(filter: { status?: FlowStatus | undefined; sessionId?: string | undefined; limit: number }): { count: number; taskflows: TaskflowSummary[] } {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.sessionId) {
      where.push('session_id = ?');
      params.push(filter.sessionId);
    }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const count = this.store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM taskflows ${clause}`, params)?.n ?? 0;
    const rows = this.store.all<FlowDbRow>(`SELECT ${FLOW_COLUMNS} FROM taskflows ${clause} ORDER BY created_at DESC, id LIMIT ?`, [...params, filter.limit]);
    return { count, taskflows: rows.map(summary) };
  }

  /** Whether there is no flow at all. */
  empty(): boolean {
    return this.store.get<{ id: string }>('SELECT id FROM taskflows LIMIT 1') === undefined;
  }

  /** Ids of flows in `status`, oldest first. */
  ids(status: FlowStatus, limit = 10_000): string[] {
    return this.store.all<{ id: string }>('SELECT id FROM taskflows WHERE status = ? ORDER BY created_at, rowid LIMIT ?', [status, limit]).map((r) => r.id);
  }

  /** Flows (any status) whose current step is running: at start-up, what a crash interrupted. */
  interrupted(): string[] {
    return this.store.all<{ id: string }>("SELECT f.id FROM taskflows f JOIN taskflow_steps s ON s.flow_id = f.id AND s.idx = f.current_step WHERE s.status = 'running' ORDER BY f.created_at, f.rowid").map((r) => r.id);
  }

  /** Waiting flows whose wait_until has come, oldest deadline first. */
  due(now: number, limit = 1000): string[] {
    return this.store.all<{ id: string }>("SELECT id FROM taskflows WHERE status = 'waiting' AND wait_until IS NOT NULL AND wait_until <= ? ORDER BY wait_until LIMIT ?", [now, limit]).map((r) => r.id);
  }

  /** The earliest wait_until of a waiting flow, or null. */
  nextDeadline(): number | null {
    return this.store.get<{ t: number | null }>("SELECT MIN(wait_until) AS t FROM taskflows WHERE status = 'waiting'")?.t ?? null;
  }

  /** The flow and step waiting for this approval request. */
  byApproval(requestId: string): { flowId: string; index: number } | undefined {
    const row = this.store.get<{ flow_id: string; idx: number }>("SELECT flow_id, idx FROM taskflow_steps WHERE approval_request_id = ? AND status = 'waiting'", [requestId]);
    return row ? { flowId: row.flow_id, index: row.idx } : undefined;
  }

  /** Flows whose current step waits for a bus event of `type`-any (the engine filters). */
  eventWaiters(): { flowId: string; index: number; input: StepSpec; wait_until: number | null }[] {
    return this.store
      .all<{ flow_id: string; idx: number; input: string; wait_until: number | null }>(
        "SELECT s.flow_id, s.idx, s.input, s.wait_until FROM taskflow_steps s JOIN taskflows f ON f.id = s.flow_id AND f.current_step = s.idx WHERE f.status = 'waiting' AND s.status = 'waiting' AND s.type = 'wait' AND s.approval_request_id IS NULL",
      )
      .map((r) => ({ flowId: r.flow_id, index: r.idx, input: JSON.parse(r.input) as StepSpec, wait_until: r.wait_until }));
  }

  /** Removes finished flows last changed before `before` (epoch seconds); returns how many. */
  async prune(before: number): Promise<number> {
    const due = "SELECT id FROM taskflows WHERE status IN ('completed', 'failed', 'cancelled') AND updated_at < ? LIMIT 1000";
    // A read first: a write transaction costs a durable commit (fsyncs), at every start of the brain.
    if (this.store.get<{ id: string }>(due, [before]) === undefined) return 0;
    return this.store.write((db) => {
      const ids = db.all<{ id: string }>(due, [before]).map((r) => r.id);
      for (const id of ids) {
        db.run('DELETE FROM taskflow_transitions WHERE flow_id = ?', [id]);
        db.run('DELETE FROM taskflow_steps WHERE flow_id = ?', [id]);
        db.run('DELETE FROM taskflows WHERE id = ?', [id]);
      }
      return ids.length;
    });
  }
}

const flowRow = ({ updated_at: _updated, started_at: _started, completed_at: _completed, ...row }: FlowDbRow): FlowRow => ({ ...row, context: JSON.parse(row.context) as Record<string, unknown> });

const stepRow = (row: StepDbRow): StepRow => ({
  index: row.idx,
  type: row.type,
  input: JSON.parse(row.input) as StepSpec,
  status: row.status,
  result: row.result === null ? null : (JSON.parse(row.result) as unknown),
  error: row.error,
  approval_request_id: row.approval_request_id,
  wait_until: row.wait_until,
  loops: row.loops,
});

/** A flow as listed: every column but the engine's own (timezone, runs). */
const summary = ({ timezone: _timezone, runs: _runs, ...row }: FlowDbRow): TaskflowSummary => ({ ...row, context: JSON.parse(row.context) as Record<string, unknown> });
