// The TaskFlow state machines (spec 3.4: "transitions not shown"; docs/taskflows.md "States"): which
// status may follow which, for flows and for steps. The store refuses anything else, so no sequence of
// operations and crashes can reach a forbidden transition (test/daemon/taskflows/flow-machine.test.ts
// drives the engine through random ones). Terminal states (completed, failed… see below) are final
// except where a person explicitly resumes.
import type { FlowStatus, StepStatus } from '../../protocol/taskflows';

/**
 * Flow: queued → running ⇄ waiting; running → completed | failed; any live state → cancelled.
 * failed → queued is a person's resume (retry or skip of the failed step). completed and cancelled
 * are final: nothing overwrites them (a cancel never replaces a completion, nor the other way).
 */
export const FLOW_TRANSITIONS: Readonly<Record<FlowStatus, readonly FlowStatus[]>> = {
  queued: ['running', 'waiting', 'cancelled'],
  running: ['waiting', 'completed', 'failed', 'cancelled', 'queued'],
  waiting: ['queued', 'cancelled', 'failed', 'completed'],
  failed: ['queued'],
  completed: [],
  cancelled: [],
};

/**
 * Step: pending → running → succeeded | failed | waiting | unknown; pending → succeeded for a step
 * with no effect to run (a branch), pending → failed for one that cannot start (a reference that does
 * not resolve); waiting → running (a wait fired,
 * an approval came) | succeeded | failed; a step is skipped from pending (a branch jumped over it),
 * failed, unknown or waiting (a person's skip). unknown → pending is a person's retry; running →
 * pending is the brain re-running a read-only step after a crash. A succeeded or skipped step goes
 * back to pending only when a branch loops over it.
 */
export const STEP_TRANSITIONS: Readonly<Record<StepStatus, readonly StepStatus[]>> = {
  pending: ['running', 'skipped', 'waiting', 'failed', 'succeeded'],
  running: ['succeeded', 'failed', 'waiting', 'unknown', 'pending'],
  waiting: ['running', 'succeeded', 'failed', 'skipped', 'pending'],
  unknown: ['pending', 'skipped'],
  failed: ['pending', 'skipped'],
  succeeded: ['pending'],
  skipped: ['pending'],
};

export const FLOW_FINAL: ReadonlySet<FlowStatus> = new Set(['completed', 'cancelled']);
/** Flows the engine drives (not waiting for time, an event or a person). */
export const FLOW_LIVE: ReadonlySet<FlowStatus> = new Set(['queued', 'running']);

export const canFlow = (from: FlowStatus, to: FlowStatus): boolean => FLOW_TRANSITIONS[from].includes(to);
export const canStep = (from: StepStatus, to: StepStatus): boolean => STEP_TRANSITIONS[from].includes(to);

/** A refused transition: the store's guard. The API turns it into a 409 carrying the current status. */
export class TransitionError extends Error {
  constructor(
    readonly kind: 'flow' | 'step',
    readonly from: string,
    readonly to: string,
  ) {
    super(`a ${kind} that is ${from} cannot become ${to}`);
    this.name = 'TransitionError';
  }
}
