// The TaskFlow engine (docs/taskflows.md): drives queued flows step by step, at most
// `taskflows.max_running` at once; parks flows that wait (a time, a bus event, an approval, a person)
// and wakes them; recovers after a crash; fires schedules; and serves the API's operations.
//
// Durability rule: every state change is one store transaction (flow-store.ts) that is durable
// before anything acts on it. A step is marked `running` before its effect starts; after a kill -9
// a `running` step is re-run only when it is read-only (a passive tool, a wait, a prompt without
// tools, a branch) — an effectful one becomes `unknown` and its flow waits for a person's decision.
import type { Logger } from 'pino';
import type { Clock, ConversationPort } from '../kernel/capability';
import type { EventBus } from '../kernel/event-bus';
import type { BrainEvent } from '../kernel/events';
import type { PermissionHook } from '../kernel/permissions';
import { taskflowTurnId } from '../kernel/permissions';
import type { AgentMemory } from '../kernel/ports';
import type { ToolRegistry } from '../kernel/tool-registry';
import { ToolDenied, ToolFailure } from '../kernel/tool';
import { AppError, notFound } from '../kernel/errors';
import type { CreateTaskflow, FlowStatus, StepSpec, StepStatus, Taskflow, TaskflowSummary } from '../../protocol/taskflows';
import { TransitionError } from './flow-machine';
import type { Change, FlowRow, FlowStore, StepChange, StepRow } from './flow-store';
import { nextOccurrence, parseInstant, validateFlow } from './flow-validation';
import { lookup, resolve, TemplateError, type Scope } from './templates';

export interface TaskflowSettings {
  max_running: number;
  retention_days: number;
}

export interface EngineDeps {
  store: FlowStore;
  tools: ToolRegistry;
  permissions: PermissionHook;
  conversations: ConversationPort;
  memory: AgentMemory | null;
  bus: EventBus<BrainEvent>;
  clock: Clock;
  logger: Logger;
  settings: TaskflowSettings;
  /** The session a flow created without one belongs to. */
  defaultSession: string;
}

/** The longest single timer (setTimeout's limit is ~24.8 days); a later deadline is re-checked then. */
const MAX_TIMER_MS = 6 * 3600_000;
const DAY_S = 86_400;
/** Bound of one drive loop: steps of one flow run in one go (a branch loop cannot spin forever). */
const MAX_STEPS_PER_DRIVE = 1_000_000;

type Outcome = 'next' | 'stop';

export class TaskflowEngine {
  /** Flows being driven now, with the controller that cancels their current step. */
  private readonly active = new Map<string, AbortController>();
  private readonly drives = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private pruner: NodeJS.Timeout | null = null;
  private started = false;
  private stopped = false;
  /** Event types some wait step waits for; recomputed after any change (the bus is busy: a query per event would not do). */
  private waitedTypes: Set<string> | null = null;

  constructor(private readonly deps: EngineDeps) {}

  private now(): number {
    return this.deps.clock.now() / 1000;
  }

  // ── Life cycle ────────────────────────────────────────────────────────────────────────────────
  /** Recovers what a crash left running, re-arms waits (a deadline passed while down fires once now), starts queued flows. */
  async start(): Promise<void> {
    this.deps.bus.on('taskflows', (event) => this.hear(event));
    this.pruner = setInterval(() => void this.prune(), DAY_S * 1000).unref();
    // A brain without flows (most of them, most of the time) asks one question at start, not five.
    if (this.deps.store.empty()) {
      this.started = true;
      return;
    }
    await this.recover();
    this.started = true;
    await this.prune();
    await this.fire();
    this.pump();
  }

  /** Stops starting steps; cancels running prompts and waits; waits for the current steps to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.deps.bus.off('taskflows');
    if (this.timer) clearTimeout(this.timer);
    if (this.pruner) clearInterval(this.pruner);
    for (const abort of this.active.values()) abort.abort();
    await Promise.all([...this.drives]);
  }

  /**
   * After a crash: a current step left running runs again when it is read-only and becomes unknown
   * otherwise — whatever its flow's status, since a flow paused (or paused and resumed) while its step
   * ran is waiting or queued with the step still running, and a cancelled one keeps the record of a
   * step that never finished. Running flows are queued again.
   */
  private async recover(): Promise<void> {
    for (const id of this.deps.store.interrupted()) {
      const flow = this.deps.store.flow(id)!;
      const step = this.deps.store.step(id, flow.current_step!)!;
      const effectful = !readOnly(step, this.deps.tools);
      const unknown: StepChange = { index: step.index, to: 'unknown', reason: 'the brain stopped while this step ran; whether it took effect is unknown, so it is not run again' };
      if (flow.status === 'cancelled' || flow.status === 'completed' || flow.status === 'failed') {
        const ended = 'the brain stopped while this step ran; its flow had ended, so it does not run again';
        await this.change(flow, { steps: [effectful ? unknown : { index: step.index, to: 'failed', reason: ended, set: { error: ended } }] });
      } else if (effectful) {
        await this.change(flow, { steps: [unknown], flow: { to: 'waiting', reason: `step ${step.index} (${step.type}) was running when the brain stopped: resume with retry or skip`, set: { wait_until: null } } });
      } else {
        await this.change(flow, { steps: [{ index: step.index, to: 'pending', reason: 'the brain stopped while this read-only step ran; it runs again' }], flow: { to: flow.status === 'running' ? 'queued' : flow.status, reason: 'the brain restarted' } });
      }
    }
    for (const id of this.deps.store.ids('running')) {
      await this.change(this.deps.store.flow(id)!, { flow: { to: 'queued', reason: 'the brain restarted' } });
    }
  }

  // ── Operations (the API, the agent's tool) ────────────────────────────────────────────────────
  async create(input: CreateTaskflow, origin: { sessionId?: string | undefined }): Promise<Taskflow> {
    validateFlow(input, this.deps.tools);
    const sessionId = input.session_id ?? origin.sessionId ?? this.deps.defaultSession;
    let id: string;
    if (input.schedule !== undefined) {
      const first = nextOccurrence(input.schedule, input.timezone ?? null, this.now());
      id = await this.deps.store.insert({ ...input, session_id: sessionId }, { status: 'waiting', waitUntil: first, reason: `scheduled (${input.schedule}); first run at ${iso(first!)}` });
      this.arm();
    } else {
      id = await this.deps.store.insert({ ...input, session_id: sessionId }, { status: 'queued', waitUntil: null, reason: 'created' });
    }
    const flow = this.deps.store.flow(id)!;
    this.announce(flow, input.schedule === undefined ? 'created' : 'scheduled');
    // As created (queued, or waiting for its schedule): the engine may start it at once.
    const created = this.deps.store.get(id)!;
    this.pump();
    return created;
  }

  get(id: string): Taskflow | undefined {
    return this.deps.store.get(id);
  }

  list(filter: { status?: FlowStatus | undefined; sessionId?: string | undefined; limit: number }): { count: number; taskflows: TaskflowSummary[] } {
    return this.deps.store.list(filter);
  }

  /**
   * Continues a waiting or failed flow. An `unknown` step needs `decision` (retry runs it again,
   * skip moves past it); a failed step is retried unless `skip`; a time or event wait ends now. A flow
   * waiting for an approval is resumed by approving or rejecting that request, not here (409).
   */
  async resume(id: string, decision?: 'retry' | 'skip'): Promise<Taskflow> {
    const flow = this.mustFlow(id);
    const step = flow.current_step === null ? undefined : this.deps.store.step(id, flow.current_step);
    if (flow.status === 'waiting' && flow.schedule !== null && flow.parent_id === null) {
      await this.occur(flow, 'resumed: a run now, outside the schedule', false);
      return this.deps.store.get(id)!;
    }
    if (flow.status !== 'waiting' && flow.status !== 'failed') throw conflict(flow, `a ${flow.status} flow cannot be resumed`);
    const changes: StepChange[] = [];
    let next = flow.current_step;
    if (step?.status === 'unknown') {
      if (!decision) throw new AppError('BAD_REQUEST', `step ${step.index} is unknown (the brain stopped while it ran): resume with decision retry (run it again) or skip (move past it)`, { step: step.index, field: 'decision' });
      changes.push(decision === 'retry' ? { index: step.index, to: 'pending', reason: 'a person chose to run it again' } : { index: step.index, to: 'skipped', reason: 'a person chose to skip it' });
      if (decision === 'skip') next = step.index + 1;
    } else if (step?.status === 'waiting' && step.approval_request_id !== null) {
      throw conflict(flow, `the flow waits for approval request ${step.approval_request_id}; approve or reject it (svc twin approvals)`, { approval_request_id: step.approval_request_id });
    } else if (step?.status === 'waiting') {
      changes.push(decision === 'skip' ? { index: step.index, to: 'skipped', reason: 'a person skipped the wait' } : { index: step.index, to: 'succeeded', reason: 'a person ended the wait', set: { result: { resumed: true, at: this.now() } } });
      next = step.index + 1;
    } else if (step?.status === 'failed') {
      changes.push(decision === 'skip' ? { index: step.index, to: 'skipped', reason: 'a person chose to skip it' } : { index: step.index, to: 'pending', reason: 'a person chose to run it again' });
      if (decision === 'skip') next = step.index + 1;
    }
    await this.change(flow, { steps: changes, flow: { to: 'queued', reason: `resumed${decision ? ` (${decision})` : ''}`, set: { wait_until: null, error: null, current_step: next } }, expect: [flow.status] });
    this.pump();
    return this.deps.store.get(id)!;
  }

  /** Pauses a queued or running flow before its next step, until `until` (epoch seconds) or a resume. */
  async wait(id: string, until?: number): Promise<Taskflow> {
    const flow = this.mustFlow(id);
    if (flow.status !== 'queued' && flow.status !== 'running') throw conflict(flow, `a ${flow.status} flow cannot be paused`);
    await this.change(flow, { flow: { to: 'waiting', reason: until === undefined ? 'paused until resumed' : `paused until ${iso(until)}`, set: { wait_until: until ?? null } }, expect: [flow.status] });
    this.arm();
    return this.deps.store.get(id)!;
  }

  /** Cancels a live flow (queued, running or waiting); its current prompt or wait stops. Final flows: 409. */
  async cancel(id: string, reason?: string): Promise<Taskflow> {
    const flow = this.mustFlow(id);
    if (flow.status === 'completed' || flow.status === 'failed' || flow.status === 'cancelled') throw conflict(flow, `a ${flow.status} flow cannot be cancelled`);
    const step = flow.current_step === null ? undefined : this.deps.store.step(id, flow.current_step);
    // A wait ends with its flow; a running step finishes and is recorded (its effect may be under way).
    const steps: StepChange[] = step?.status === 'waiting' ? [{ index: step.index, to: 'skipped', reason: 'its flow was cancelled' }] : [];
    await this.change(flow, { steps, flow: { to: 'cancelled', reason: reason ? `cancelled: ${reason}` : 'cancelled', set: { wait_until: null } }, expect: [flow.status] });
    this.active.get(id)?.abort();
    return this.deps.store.get(id)!;
  }

  private mustFlow(id: string): FlowRow {
    const flow = this.deps.store.flow(id);
    if (!flow) throw notFound('taskflow', id);
    return flow;
  }

  // ── Running ───────────────────────────────────────────────────────────────────────────────────
  /** Starts queued flows, oldest first, while fewer than max_running run. */
  private pump(): void {
    if (!this.started || this.stopped) return;
    const room = this.deps.settings.max_running - this.active.size;
    if (room <= 0) return;
    for (const id of this.deps.store.ids('queued', room + this.active.size)) {
      if (this.active.size >= this.deps.settings.max_running) break;
      if (!this.active.has(id)) this.launch(id);
    }
  }

  private launch(id: string): void {
    const abort = new AbortController();
    this.active.set(id, abort);
    const drive = this.drive(id, abort.signal)
      .catch((err: unknown) => this.deps.logger.error({ err, flow_id: id }, 'a taskflow stopped on an error inside the brain'))
      .finally(() => {
        this.active.delete(id);
        this.drives.delete(drive);
        this.pump();
      });
    this.drives.add(drive);
  }

  private async drive(id: string, signal: AbortSignal): Promise<void> {
    const first = this.deps.store.flow(id);
    if (!first || first.status !== 'queued') return;
    if (!(await this.change(first, { flow: { to: 'running', reason: 'started', set: { current_step: first.current_step ?? 0 } }, expect: ['queued'] }))) return;
    for (let n = 0; n < MAX_STEPS_PER_DRIVE; n++) {
      if (this.stopped || signal.aborted) return;
      const flow = this.deps.store.flow(id);
      if (!flow || flow.status !== 'running') return;
      const steps = this.deps.store.steps(id);
      const index = flow.current_step ?? 0;
      if (index >= steps.length) {
        await this.change(flow, { flow: { to: 'completed', reason: `all ${steps.length} steps done` } });
        return;
      }
      const step = steps[index]!;
      // Only a pending step starts; anything else at the current index (a decision still owed, a step
      // already done) is settled here, so a flow is never left running on a step nothing will run.
      if (step.status !== 'pending') {
        if ((await this.settleCurrent(flow, step)) === 'stop') return;
        continue;
      }
      if ((await this.runStep(flow, steps, step, signal)) === 'stop') return;
    }
    this.deps.logger.error({ flow_id: id }, 'a taskflow ran more steps in one go than the brain allows; it was left running');
  }

  /** The current step is not pending: move past a finished one, stop for one that needs a person or an outside event. */
  private async settleCurrent(flow: FlowRow, step: StepRow): Promise<Outcome> {
    if (step.status === 'succeeded' || step.status === 'skipped') {
      return (await this.change(flow, { flow: { reason: 'step already done', set: { current_step: step.index + 1 } } })) ? 'next' : 'stop';
    }
    if (step.status === 'failed') {
      await this.change(flow, { flow: { to: 'failed', reason: `step ${step.index} (${step.type}) failed`, set: { error: `step ${step.index}: ${step.error ?? 'failed'}` } } });
      return 'stop';
    }
    const reason =
      step.status === 'unknown'
        ? `step ${step.index} (${step.type}) is unknown: resume with retry or skip`
        : `step ${step.index} (${step.type}) is ${step.status}${step.approval_request_id ? `: waiting for approval request ${step.approval_request_id}` : ''}`;
    await this.change(flow, { flow: { to: 'waiting', reason, set: { wait_until: step.status === 'waiting' ? step.wait_until : null } } });
    return 'stop';
  }

  /** Runs one step: marks it running (durably), acts, records the outcome. */
  private async runStep(flow: FlowRow, steps: StepRow[], step: StepRow, signal: AbortSignal): Promise<Outcome> {
    const input = step.input;
    // A branch reads its reference itself (evaluate): resolving would replace it by its value.
    if (input.type === 'branch') return this.branch(flow, steps, step, input);
    let resolved: StepSpec;
    try {
      resolved = resolve(input, this.scope(flow, steps)) as StepSpec;
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err;
      await this.fail(flow, step, err.message);
      return 'stop';
    }
    if (resolved.type === 'wait') return this.startWait(flow, step, resolved);
    if (!(await this.change(flow, { steps: [{ index: step.index, to: 'running', reason: 'started' }] }))) return 'stop';
    // A cancel written in the same commit as the start: the step never begins.
    if (this.cancelled(flow)) return this.failRunning(flow, step, 'its flow was cancelled before the step began');
    switch (resolved.type) {
      case 'tool':
        return this.tool(flow, step, resolved);
      case 'prompt':
        return this.prompt(flow, step, resolved, signal);
      case 'note':
        return this.note(flow, step, resolved);
      default:
        throw new Error(`step ${step.index}: a ${resolved.type} step is not run here`);
    }
  }

  private async tool(flow: FlowRow, step: StepRow, spec: Extract<StepSpec, { type: 'tool' }>): Promise<Outcome> {
    const tool = this.deps.tools.get(spec.tool);
    const args = spec.args ?? {};
    if (!tool) return this.failRunning(flow, step, `there is no tool named ${spec.tool} now`);
    const problems = this.deps.tools.problems(spec.tool, args);
    if (problems.length > 0) return this.failRunning(flow, step, `invalid arguments for ${spec.tool}: ${problems.join('; ')}`);
    const turnId = taskflowTurnId(flow.id, step.index);
    const decision = await this.deps.permissions.check({ tool: spec.tool, safety: tool.safety, args, sessionId: flow.session_id, turnId });
    if (decision.verdict === 'deny') return this.failRunning(flow, step, decision.reason);
    if (decision.verdict === 'pending') {
      const held: StepChange = { index: step.index, to: 'waiting', reason: `held for approval (request ${decision.requestId})`, set: { approval_request_id: decision.requestId } };
      // Cancelled while the call was being held: the request exists, so the step records it (an approval still runs the call and is recorded).
      if (this.cancelled(flow)) await this.change(flow, { steps: [held], expect: ['cancelled'] });
      else await this.change(flow, { steps: [held], flow: { to: 'waiting', reason: `step ${step.index} (${spec.tool}) waits for approval request ${decision.requestId}` } });
      return 'stop';
    }
    try {
      const outcome = await tool.run(args, { sessionId: flow.session_id, turnId, specialist: 'general', signal: new AbortController().signal });
      return this.succeed(flow, step, toolResult(outcome.summary, outcome.data), `${spec.tool}: ${outcome.summary}`);
    } catch (err) {
      if (err instanceof ToolFailure || err instanceof ToolDenied) return this.failRunning(flow, step, err.message);
      this.deps.logger.error({ err, flow_id: flow.id, step: step.index, tool: spec.tool }, 'a taskflow tool failed');
      return this.failRunning(flow, step, `${spec.tool} failed: ${(err as Error).message}`);
    }
  }

  private async prompt(flow: FlowRow, step: StepRow, spec: Extract<StepSpec, { type: 'prompt' }>, signal: AbortSignal): Promise<Outcome> {
    const answer = await this.deps.conversations.prompt({ sessionId: flow.session_id, text: spec.text, tools: spec.tools ?? false, signal });
    // The brain stopping mid-turn leaves it running: a restart re-runs a prompt without tools and asks about one with tools.
    if (this.stopped) return 'stop';
    if (answer.finishReason === 'cancelled') return this.failRunning(flow, step, 'the turn was cancelled (its flow was cancelled)');
    if (answer.finishReason === 'error') return this.failRunning(flow, step, `the model could not answer: ${answer.text.slice(0, 300)}`);
    return this.succeed(flow, step, { text: answer.text, session_id: answer.sessionId }, 'answered');
  }

  private async note(flow: FlowRow, step: StepRow, spec: Extract<StepSpec, { type: 'note' }>): Promise<Outcome> {
    if (!this.deps.memory) return this.failRunning(flow, step, 'memory is not available in this brain');
    const note = await this.deps.memory.remember(spec.text, `taskflow:${flow.id}`);
    return this.succeed(flow, step, { id: note.id }, `noted ${note.id}`);
  }

  /** A branch has no effect: it succeeds at once with where it went (skipping or looping over steps). */
  private async branch(flow: FlowRow, steps: StepRow[], step: StepRow, spec: Extract<StepSpec, { type: 'branch' }>): Promise<Outcome> {
    const holds = evaluate(spec.if, this.scope(flow, steps));
    const backward = spec.goto <= step.index;
    const looped = backward && step.loops >= (spec.max_loops ?? 0);
    const taken = holds && !looped;
    const changes: StepChange[] = [];
    let next = step.index + 1;
    if (taken && !backward) {
      for (let i = step.index + 1; i < spec.goto; i++) if (steps[i]!.status === 'pending') changes.push({ index: i, to: 'skipped', reason: `branch ${step.index} jumped to ${spec.goto}` });
      changes.unshift({ index: step.index, to: 'succeeded', reason: `condition held: on to step ${spec.goto}`, set: { result: { taken: true, goto: spec.goto } } });
      next = spec.goto;
    } else if (taken) {
      // Back to an earlier step: the steps from there on run again; this branch counts the loop.
      for (let i = spec.goto; i < step.index; i++) changes.push({ index: i, to: 'pending', reason: `loop ${step.loops + 1} of ${spec.max_loops!} from branch ${step.index}` });
      changes.push({ index: step.index, to: 'pending', reason: `looped back to step ${spec.goto}`, set: { loops: step.loops + 1 } });
      next = spec.goto;
    } else {
      changes.push({ index: step.index, to: 'succeeded', reason: looped && holds ? `loop limit of ${spec.max_loops!} reached: on to the next step` : 'condition did not hold: on to the next step', set: { result: { taken: false } } });
    }
    return (await this.change(flow, { steps: changes, flow: { reason: 'branch', set: { current_step: next } } })) ? 'next' : 'stop';
  }

  private async startWait(flow: FlowRow, step: StepRow, spec: Extract<StepSpec, { type: 'wait' }>): Promise<Outcome> {
    const now = this.now();
    const deadline = spec.until !== undefined ? parseInstant(spec.until) : spec.seconds !== undefined ? now + spec.seconds : spec.timeout_seconds !== undefined ? now + spec.timeout_seconds : null;
    const what = spec.event ? `for a ${spec.event.type} event${deadline !== null ? ` until ${iso(deadline)}` : ''}` : `until ${iso(deadline!)}`;
    await this.change(flow, {
      steps: [{ index: step.index, to: 'waiting', reason: `waiting ${what}`, set: { wait_until: deadline } }],
      flow: { to: 'waiting', reason: `step ${step.index} waits ${what}`, set: { wait_until: deadline } },
    });
    this.arm();
    return 'stop';
  }

  private succeed(flow: FlowRow, step: StepRow, result: unknown, reason: string): Promise<Outcome> {
    return this.change(flow, { steps: [{ index: step.index, to: 'succeeded', reason, set: { result } }], flow: { reason: 'step done', set: { current_step: step.index + 1 } } }).then((ok) => (ok ? 'next' : 'stop'));
  }

  private async failRunning(flow: FlowRow, step: StepRow, error: string): Promise<Outcome> {
    await this.fail(flow, step, error);
    return 'stop';
  }

  /** Whether the flow was cancelled meanwhile (read now: a cancel lands between a step's awaits). */
  private cancelled(flow: FlowRow): boolean {
    return this.deps.store.flow(flow.id)?.status === 'cancelled';
  }

  /** The step failed: so does the flow (resume retries or skips the step). */
  private async fail(flow: FlowRow, step: StepRow, error: string): Promise<void> {
    const failed: StepChange = { index: step.index, to: 'failed', reason: error, set: { error } };
    // A step that ends after its flow was cancelled is still recorded; the flow stays cancelled.
    if (this.cancelled(flow)) {
      await this.change(flow, { steps: [failed], expect: ['cancelled'] });
      return;
    }
    await this.change(flow, { steps: [failed], flow: { to: 'failed', reason: `step ${step.index} (${step.type}) failed`, set: { error: `step ${step.index}: ${error}` } } });
  }

  private scope(flow: FlowRow, steps: readonly StepRow[]): Scope {
    return { steps, context: flow.context, flow: { id: flow.id, title: flow.title, session_id: flow.session_id }, now: () => iso(this.now()) };
  }

  // ── Waking ────────────────────────────────────────────────────────────────────────────────────
  /** Sets the one timer to the earliest deadline of a waiting flow. */
  private arm(): void {
    if (this.stopped) return;
    const next = this.deps.store.nextDeadline();
    if (next === null) return;
    const at = Math.min(next * 1000, this.deps.clock.now() + MAX_TIMER_MS);
    if (this.timer && at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.timerAt = Infinity;
        this.track(this.fire(), null, 'waking taskflows failed');
      },
      Math.max(0, at - this.deps.clock.now()),
    );
  }

  /** Every waiting flow whose deadline has come: a wait ends, an event wait times out, a pause ends, a schedule occurs. */
  private async fire(): Promise<void> {
    if (this.stopped) return;
    for (const id of this.deps.store.due(this.now())) {
      if (this.stopped) return;
      const flow = this.deps.store.flow(id);
      if (!flow || flow.status !== 'waiting') continue;
      if (flow.schedule !== null && flow.parent_id === null) {
        await this.occur(flow, 'scheduled occurrence', true);
        continue;
      }
      const step = flow.current_step === null ? undefined : this.deps.store.step(id, flow.current_step);
      if (step?.status === 'waiting' && step.type === 'wait' && step.input.type === 'wait' && step.input.event !== undefined) {
        await this.change(flow, {
          steps: [{ index: step.index, to: 'failed', reason: `no ${step.input.event.type} event came in time`, set: { error: `no ${step.input.event.type} event came in time` } }],
          flow: { to: 'failed', reason: `step ${step.index} (wait) timed out`, set: { wait_until: null, error: `step ${step.index}: no ${step.input.event.type} event came in time` } },
        });
      } else if (step?.status === 'waiting' && step.type === 'wait') {
        await this.change(flow, {
          steps: [{ index: step.index, to: 'succeeded', reason: 'the time came', set: { result: { waited_until: step.wait_until, fired_at: this.now() } } }],
          flow: { to: 'queued', reason: `step ${step.index} (wait) is over`, set: { wait_until: null, current_step: step.index + 1 } },
        });
      } else if (step?.status !== 'waiting') {
        await this.change(flow, { flow: { to: 'queued', reason: 'the pause is over', set: { wait_until: null } } });
      }
    }
    this.arm();
    this.pump();
  }

  /** One occurrence of a scheduled flow: a run is queued and the next occurrence set (both in one transaction). */
  private async occur(flow: FlowRow, reason: string, advance: boolean): Promise<void> {
    const next = advance ? nextOccurrence(flow.schedule!, flow.timezone, this.now()) : flow.wait_until;
    const run = await this.deps.store.spawnRun(flow.id, next, next === null ? reason : `${reason}; next at ${iso(next)}`);
    if (run === null) return;
    const created = this.deps.store.flow(run)!;
    this.announce(created, `run of scheduled flow ${flow.id}`);
    this.announce(this.deps.store.flow(flow.id)!, reason);
    this.arm();
    this.pump();
  }

  /** The bus: approvals of held tool steps, and events waits are waiting for. */
  private hear(event: BrainEvent): void {
    if (this.stopped) return;
    if (event.type === 'approval_resolved') {
      const held = this.deps.store.byApproval(event.requestId);
      if (held) this.track(this.approved(held.flowId, held.index, event), held.flowId, 'recording an approval in a taskflow failed');
      return;
    }
    if (event.type === 'taskflow_update') return;
    this.waitedTypes ??= new Set(this.deps.store.eventWaiters().flatMap((w) => (w.input.type === 'wait' && w.input.event ? [w.input.event.type] : [])));
    if (!this.waitedTypes.has(event.type)) return;
    const waiters = this.deps.store.eventWaiters().filter((w) => w.input.type === 'wait' && w.input.event?.type === event.type && matches(event, w.input.event.match));
    for (const w of waiters) this.track(this.eventCame(w.flowId, w.index, event), w.flowId, 'recording an event in a taskflow failed');
  }

  /** Work started by a bus event or the timer: stop() waits for it, so nothing writes after the store closes. */
  private track(work: Promise<void>, flowId: string | null, failure: string): void {
    const tracked = work.catch((err: unknown) => this.deps.logger.error({ err, ...(flowId ? { flow_id: flowId } : {}) }, failure)).finally(() => this.drives.delete(tracked));
    this.drives.add(tracked);
  }

  private async approved(flowId: string, index: number, event: Extract<BrainEvent, { type: 'approval_resolved' }>): Promise<void> {
    const flow = this.deps.store.flow(flowId);
    if (!flow) return;
    if (event.status === 'approved' && event.result?.status === 'ok') {
      await this.change(flow, {
        steps: [{ index, to: 'succeeded', reason: `approved; ${event.tool}: ${event.result.summary}`, set: { result: toolResult(event.result.summary, event.result.data) } }],
        flow: { to: flow.status === 'waiting' ? 'queued' : flow.status, reason: `approval request ${event.requestId} approved`, set: { current_step: index + 1 } },
      });
    } else {
      const why = event.status === 'approved' ? `approved, but ${event.tool} failed: ${event.result?.summary ?? 'no result'}` : `approval request ${event.requestId} was ${event.status}`;
      await this.change(flow, {
        steps: [{ index, to: 'failed', reason: why, set: { error: why } }],
        flow: { to: flow.status === 'waiting' ? 'failed' : flow.status, reason: `step ${index} (tool) failed`, set: { error: `step ${index}: ${why}` } },
      });
    }
    this.pump();
  }

  private async eventCame(flowId: string, index: number, event: BrainEvent): Promise<void> {
    const flow = this.deps.store.flow(flowId);
    if (!flow || flow.status !== 'waiting') return;
    await this.change(flow, {
      steps: [{ index, to: 'succeeded', reason: `a ${event.type} event came`, set: { result: event } }],
      flow: { to: 'queued', reason: `step ${index} (wait) got its event`, set: { wait_until: null, current_step: index + 1 } },
    });
    this.pump();
  }

  // ── Recording ─────────────────────────────────────────────────────────────────────────────────
  /**
   * Applies a change durably, then announces it. A change the state machine refuses (the flow was
   * cancelled or paused meanwhile) is not an error: the other change won; returns false.
   */
  private async change(flow: FlowRow, change: Change): Promise<boolean> {
    try {
      await this.deps.store.apply(flow.id, change);
    } catch (err) {
      if (!(err instanceof TransitionError)) throw err;
      this.deps.logger.debug({ flow_id: flow.id, err: err.message }, 'taskflow change refused: another change came first');
      return false;
    }
    this.waitedTypes = null;
    const now = this.deps.store.flow(flow.id);
    if (!now) return true;
    const last = change.steps?.at(-1);
    const stepStatus = last ? this.deps.store.step(flow.id, last.index) : undefined;
    const reason = change.flow?.to !== undefined && change.flow.to !== flow.status ? change.flow.reason : (last?.reason ?? change.flow?.reason ?? 'changed');
    this.announce(now, reason, stepStatus);
    return true;
  }

  /** On the bus, and to the clients of the flow's session as a taskflow_update frame (when it is open). */
  private announce(flow: FlowRow, reason: string, step?: StepRow): void {
    const at = this.now();
    const changed = step ? { step: { index: step.index, type: step.type, status: step.status, error: step.error } } : {};
    this.deps.bus.emit({ type: 'taskflow_update', flowId: flow.id, sessionId: flow.session_id, title: flow.title, status: flow.status, currentStep: flow.current_step, ...changed, reason, at });
    this.deps.conversations.tell(flow.session_id, {
      type: 'taskflow_update',
      session_id: flow.session_id,
      payload: { flow_id: flow.id, title: flow.title, status: flow.status, current_step: flow.current_step, ...changed, reason, at },
    });
  }

  private async prune(): Promise<void> {
    const removed = await this.deps.store.prune(this.now() - this.deps.settings.retention_days * DAY_S);
    if (removed > 0) this.deps.logger.info({ removed }, 'removed finished taskflows past taskflows.retention_days');
  }

  /** Flows being driven now (for tests and the bench). */
  running(): number {
    return this.active.size;
  }
}

/**
 * Whether a step may run again after a crash without a person: it has no effect outside the brain, or
 * running it twice does no harm — a passive tool, a wait, a branch, a prompt without tools.
 */
export function readOnly(step: Pick<StepRow, 'input'>, tools: Pick<ToolRegistry, 'get'>): boolean {
  const input = step.input;
  if (input.type === 'tool') return tools.get(input.tool)?.safety === 'passive';
  if (input.type === 'prompt') return input.tools !== true;
  return input.type === 'wait' || input.type === 'branch';
}

/** A tool step's result: the tool's data fields (when an object) with its summary, else {summary, data}. */
export function toolResult(summary: string, data: unknown): Record<string, unknown> {
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) return { ...(data as Record<string, unknown>), summary };
  return data === undefined ? { summary } : { summary, data };
}

/** A branch's condition; a reference that does not resolve counts as absent (exists and truthy are false, comparisons fail). */
export function evaluate(condition: Extract<StepSpec, { type: 'branch' }>['if'], scope: Scope): boolean {
  let value: unknown;
  try {
    value = lookup(condition.ref.trim().slice(2, -2).trim(), scope);
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    return false;
  }
  const other = condition.value;
  switch (condition.op) {
    case 'exists':
      return value !== undefined && value !== null;
    case 'truthy':
      return Boolean(value) && !(Array.isArray(value) && value.length === 0);
    case 'eq':
      return value === other;
    case 'ne':
      return value !== other;
    case 'contains':
      return typeof value === 'string' ? typeof other === 'string' && value.includes(other) : Array.isArray(value) && value.includes(other);
    default: {
      if (typeof value !== typeof other || (typeof value !== 'number' && typeof value !== 'string')) return false;
      const [a, b] = [value, other as number | string];
      return condition.op === 'lt' ? a < b : condition.op === 'le' ? a <= b : condition.op === 'gt' ? a > b : a >= b;
    }
  }
}

function matches(event: BrainEvent, match: Record<string, string | number | boolean | null> | undefined): boolean {
  if (!match) return true;
  const fields = event as unknown as Record<string, unknown>;
  return Object.entries(match).every(([k, v]) => Object.prototype.hasOwnProperty.call(fields, k) && fields[k] === v);
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

function conflict(flow: FlowRow, message: string, extra: Record<string, unknown> = {}): AppError {
  return new AppError('CONFLICT', message, { status: flow.status, ...extra });
}

export type { StepStatus };
