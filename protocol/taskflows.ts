// TaskFlows (spec 1.4, 3.4, 4.11; docs/taskflows.md): durable background workflows. The spec names
// POST /api/taskflows, GET /api/taskflows/{id} and POST …/resume and leaves the shapes, the wait and
// cancel endpoints and the transitions "not shown"; everything here is that design, defined once for
// the brain's validation, the CLI and the docs.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Id, Line, Text } from './text';

/** Bounds of the list's `limit`: outside them, or not an integer, is a 400, never clamped. */
export const TASKFLOW_LIST_LIMIT = { min: 1, max: 500, default: 100 } as const;
/** Most steps one flow may have. */
export const MAX_STEPS = 1000;
/** Most times one branch may jump backwards (its `max_loops`). */
export const MAX_LOOPS = 1000;

export const FLOW_STATUSES = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled'] as const;
export const FlowStatus = Type.Union(FLOW_STATUSES.map((s) => Type.Literal(s)));
export type FlowStatus = (typeof FLOW_STATUSES)[number];

export const STEP_STATUSES = ['pending', 'running', 'waiting', 'succeeded', 'failed', 'skipped', 'unknown'] as const;
export const StepStatus = Type.Union(STEP_STATUSES.map((s) => Type.Literal(s)));
export type StepStatus = (typeof STEP_STATUSES)[number];

const Obj = <P extends Record<string, TSchema>>(props: P, description?: string) => Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
const Args = Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { description: 'Arguments; strings may hold {{…}} references (docs/taskflows.md "Templates")' });
/** An ISO 8601 time with an offset or Z, or epoch seconds. */
const Instant = Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Number({ minimum: 0 })]);

// ── Steps as created ─────────────────────────────────────────────────────────────────────────────
export const ToolStepSpec = Obj({ type: Type.Literal('tool'), tool: Id({ maxLength: 64 }), args: Type.Optional(Args) }, 'Runs a registered tool through the permission plane');
export const PromptStepSpec = Obj(
  {
    type: Type.Literal('prompt'),
    text: Text({ minLength: 1, maxLength: 16_000, blank: false }),
    tools: Type.Optional(Type.Boolean({ description: 'Whether the turn may call tools (default false: a prompt without tools is read-only)' })),
  },
  'An agent turn in the flow\'s session; its result is {text}',
);
export const WaitStepSpec = Obj(
  {
    type: Type.Literal('wait'),
    until: Type.Optional(Instant),
    seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 366 * 24 * 3600 })),
    event: Type.Optional(Obj({ type: Id({ maxLength: 64 }), match: Type.Optional(Type.Record(Type.String({ maxLength: 200 }), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]))) })),
    timeout_seconds: Type.Optional(Type.Number({ minimum: 1, maximum: 366 * 24 * 3600, description: 'With `event`: fail the step when no event came by then' })),
  },
  'Waits until a time, for a duration, or until a bus event: exactly one of until, seconds, event',
);
export const NoteStepSpec = Obj({ type: Type.Literal('note'), text: Text({ minLength: 1, maxLength: 16_000, blank: false }) }, 'Stores a note in memory; its result is {id}');
export const CONDITION_OPS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'contains', 'exists', 'truthy'] as const;
export const Condition = Obj({
  ref: Type.String({ minLength: 5, maxLength: 300, description: 'A {{…}} reference, e.g. {{steps.0.result.temp}}' }),
  op: Type.Union(CONDITION_OPS.map((o) => Type.Literal(o))),
  value: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])),
});
export type Condition = Static<typeof Condition>;
export const BranchStepSpec = Obj(
  {
    type: Type.Literal('branch'),
    if: Condition,
    goto: Type.Integer({ minimum: 0, maximum: MAX_STEPS, description: 'The step index to go to when the condition holds; the step count ends the flow' }),
    max_loops: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LOOPS, description: 'Required for a backward goto: how many times it may jump back' })),
  },
  'Goes to `goto` when the condition holds, else on to the next step',
);
export const StepSpec = Type.Union([ToolStepSpec, PromptStepSpec, WaitStepSpec, NoteStepSpec, BranchStepSpec]);
export type StepSpec = Static<typeof StepSpec>;
export type StepType = StepSpec['type'];

export const CreateTaskflow = Obj({
  title: Line({ minLength: 1, maxLength: 200, blank: false }),
  session_id: Type.Optional(Id()),
  context: Type.Optional(Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { description: 'Values steps may reference as {{context.key}}' })),
  steps: Type.Array(StepSpec, { minItems: 1, maxItems: MAX_STEPS }),
  schedule: Type.Optional(Type.String({ minLength: 9, maxLength: 120, description: 'A cron expression (5 or 6 fields, croner syntax): the flow runs at each occurrence' })),
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA zone of the schedule (default: the brain\'s)' })),
});
export type CreateTaskflow = Static<typeof CreateTaskflow>;

// ── Flows as stored and shown ────────────────────────────────────────────────────────────────────
export const Transition = Obj({
  from: Type.Union([StepStatus, FlowStatus, Type.Null()]),
  to: Type.Union([StepStatus, FlowStatus]),
  at: Type.Number({ description: 'Epoch seconds' }),
  reason: Type.String(),
});
export type Transition = Static<typeof Transition>;

export const Step = Obj({
  id: Type.String(),
  index: Type.Integer(),
  type: Type.Union([Type.Literal('tool'), Type.Literal('prompt'), Type.Literal('wait'), Type.Literal('note'), Type.Literal('branch')]),
  input: StepSpec,
  status: StepStatus,
  result: Type.Union([Type.Unknown(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  started_at: Type.Union([Type.Number(), Type.Null()]),
  finished_at: Type.Union([Type.Number(), Type.Null()]),
  /** The approval request a held tool step waits for. */
  approval_request_id: Type.Union([Type.String(), Type.Null()]),
  history: Type.Array(Transition, { description: 'Every status change of the step: the timeline' }),
});
export type Step = Static<typeof Step>;

export const Taskflow = Obj({
  id: Type.String(),
  title: Type.String(),
  session_id: Type.String(),
  status: FlowStatus,
  current_step: Type.Union([Type.Integer(), Type.Null()]),
  context: Type.Record(Type.String(), Type.Unknown()),
  error: Type.Union([Type.String(), Type.Null()]),
  wait_until: Type.Union([Type.Number(), Type.Null()]),
  created_at: Type.Number(),
  updated_at: Type.Number(),
  started_at: Type.Union([Type.Number(), Type.Null()]),
  completed_at: Type.Union([Type.Number(), Type.Null()]),
  schedule: Type.Union([Type.String(), Type.Null()]),
  /** A run of a scheduled flow names the flow whose schedule created it. */
  parent_id: Type.Union([Type.String(), Type.Null()]),
  history: Type.Array(Transition, { description: 'Every status change of the flow' }),
  steps: Type.Array(Step),
});
export type Taskflow = Static<typeof Taskflow>;

/** A flow in a list: without steps and histories. */
export const TaskflowSummary = Type.Omit(Taskflow, ['steps', 'history']);
export type TaskflowSummary = Static<typeof TaskflowSummary>;

export const TaskflowList = Obj({ count: Type.Integer(), taskflows: Type.Array(TaskflowSummary) });
export type TaskflowList = Static<typeof TaskflowList>;

export const TaskflowListQuery = Obj({
  status: Type.Optional(FlowStatus),
  session_id: Type.Optional(Id()),
  limit: Type.Integer({ minimum: TASKFLOW_LIST_LIMIT.min, maximum: TASKFLOW_LIST_LIMIT.max, default: TASKFLOW_LIST_LIMIT.default }),
});

export const TaskflowParams = Obj({ id: Id() });

/** POST …/resume: `decision` is required when a step is `unknown` (retry runs it again, skip moves past it). */
export const ResumeBody = Obj({ decision: Type.Optional(Type.Union([Type.Literal('retry'), Type.Literal('skip')])) });
export type ResumeBody = Static<typeof ResumeBody>;

/** POST …/wait: pause until `until` (ISO time or epoch seconds), or until resumed. */
export const WaitBody = Obj({ until: Type.Optional(Instant) });
export type WaitBody = Static<typeof WaitBody>;

export const CancelBody = Obj({ reason: Type.Optional(Line({ maxLength: 500 })) });
export type CancelBody = Static<typeof CancelBody>;
