// /api/taskflows (issue 12, spec 4.11; docs/taskflows.md "API"): create, list, show with the timeline,
// resume, wait and cancel. The engine decides every transition (a refused one is its 409 with the
// current status); these routes check the request, turn times into epoch seconds and answer.
//
// POST /api/taskflows validates its body here instead of through the route schema: ajv reports a bad
// step of the `steps` union once per variant it tried, so a client could not tell which step and
// which field were wrong. The body is checked with a TypeBox checker compiled on first use (nothing at
// start-up), and a bad step is picked apart by its `type`: the 400 names the step index and the field.
import { Type, type TLiteral, type TObject } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import type { TypedRoutes } from '../http/route-kit';
import type { TaskflowEngine } from './flow-engine';
import { parseInstant } from './flow-validation';
import { AppError, notFound } from '../kernel/errors';
import { ErrorEnvelope, type FieldError } from '../../protocol/errors';
import { PATTERN_MESSAGES } from '../../protocol/text';
import { CancelBody, CreateTaskflow, ResumeBody, StepSpec, Taskflow, TaskflowList, TaskflowListQuery, TaskflowParams, WaitBody } from '../../protocol/taskflows';

/** What the routes and the agent's tools use of the engine. */
export type FlowEngine = Pick<TaskflowEngine, 'create' | 'get' | 'list' | 'resume' | 'wait' | 'cancel'>;

/** The code of a create body the brain refuses: a 400, as every schema failure (docs/api.md). */
const INVALID_FLOW = 'BAD_REQUEST';
/** A body with thousands of bad steps is answered with the first few (as daemon/http/error-handler.ts). */
const PROBLEM_LIMIT = 20;

const errors = { 400: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope };

export const taskflowRoutes =
  (engine: FlowEngine): TypedRoutes =>
  async (app) => {
    app.post('/api/taskflows', { schema: { response: { 201: Taskflow, ...errors } } }, async (request, reply) => {
      const input = checkCreate(request.body);
      return reply.status(201).send(await engine.create(input, {}));
    });

    app.get('/api/taskflows', { schema: { querystring: TaskflowListQuery, response: { 200: TaskflowList, ...errors } } }, async (request) => {
      const { status, session_id: sessionId, limit } = request.query;
      return engine.list({ limit, ...(status === undefined ? {} : { status }), ...(sessionId === undefined ? {} : { sessionId }) });
    });

    const one = { params: TaskflowParams, response: { 200: Taskflow, ...errors } };
    app.get('/api/taskflows/:id', { schema: one }, async (request) => {
      const flow = engine.get(request.params.id);
      if (!flow) throw notFound('taskflow', request.params.id);
      return flow;
    });

    // The engine answers an unknown id (404) and a change the flow's state does not allow (409 with its status).
    app.post('/api/taskflows/:id/resume', { schema: { ...one, body: Type.Optional(ResumeBody) } }, async (request) => engine.resume(request.params.id, request.body?.decision));
    app.post('/api/taskflows/:id/wait', { schema: { ...one, body: Type.Optional(WaitBody) } }, async (request) => {
      const until = request.body?.until;
      return engine.wait(request.params.id, until === undefined ? undefined : untilSeconds(until));
    });
    app.post('/api/taskflows/:id/cancel', { schema: { ...one, body: Type.Optional(CancelBody) } }, async (request) => engine.cancel(request.params.id, request.body?.reason));
  };

function untilSeconds(until: string | number): number {
  const seconds = parseInstant(until);
  if (seconds === null) throw new AppError('BAD_REQUEST', `until ${JSON.stringify(until)}: expected an ISO 8601 time with a zone (2026-05-01T07:30:00Z, …+02:00) or epoch seconds`, { field: 'until' });
  return seconds;
}

// ── The create body ──────────────────────────────────────────────────────────────────────────────
/** One problem of a create body: where it is, and for a step, which step and field (`if.ref` for a nested one). */
export interface CreateProblem extends FieldError {
  step: number | null;
  field: string | null;
}

type StepVariant = TObject & { properties: { type: TLiteral<string> } };
const STEP_VARIANTS = StepSpec.anyOf as StepVariant[];
export const STEP_TYPES = STEP_VARIANTS.map((v) => v.properties.type.const);

let checkers: { create: TypeCheck<typeof CreateTaskflow>; steps: Map<string, TypeCheck<TObject>> } | undefined;
const compiled = () => (checkers ??= { create: TypeCompiler.Compile(CreateTaskflow), steps: new Map(STEP_VARIANTS.map((v) => [v.properties.type.const, TypeCompiler.Compile(v)])) });

/** The body as a CreateTaskflow, or a 400 whose details name the first problem's step and field and list the problems. */
export function checkCreate(body: unknown): CreateTaskflow {
  const problems = createProblems(body);
  const first = problems[0];
  if (!first) return body as CreateTaskflow;
  const shown = problems.slice(0, PROBLEM_LIMIT);
  const where = first.step === null ? '' : `step ${first.step}: `;
  throw new AppError(INVALID_FLOW, `invalid taskflow: ${where}${first.path} ${first.message}`, { step: first.step, field: first.field, path: first.path, fields: shown.map(({ path, message }) => ({ path, message })) });
}

/** Every problem of a create body: the steps' first (by index), then the rest; empty when it is valid. */
export function createProblems(body: unknown): CreateProblem[] {
  const { create } = compiled();
  if (create.Check(body)) return [];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [{ path: 'body', message: 'must be an object', step: null, field: null }];
  const steps = (body as { steps?: unknown }).steps;
  const stepProblems: CreateProblem[] = [];
  if (Array.isArray(steps)) {
    for (let i = 0; i < steps.length && stepProblems.length < PROBLEM_LIMIT; i++) stepProblems.push(...problemsOfStep(steps[i], i));
  }
  const rest: CreateProblem[] = [];
  for (const e of create.Errors(body)) {
    if (/^\/steps\/\d+(\/|$)/.test(e.path)) continue; // told above, per step
    rest.push({ path: `body${e.path}`, message: inWords(e), step: null, field: fieldOf(e.path) });
    if (rest.length >= PROBLEM_LIMIT) break;
  }
  return firstPerPath([...stepProblems, ...rest]);
}

/** TypeBox reports a missing field as "required" and again as the wrong type: one problem per place is enough. */
function firstPerPath(problems: CreateProblem[]): CreateProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => !seen.has(p.path) && Boolean(seen.add(p.path)));
}

function problemsOfStep(step: unknown, index: number): CreateProblem[] {
  const at = (field: string | null, message: string, path = field === null ? '' : `/${field}`): CreateProblem => ({ path: `body/steps/${index}${path}`, message, step: index, field });
  if (typeof step !== 'object' || step === null || Array.isArray(step)) return [at(null, 'must be an object')];
  const type = (step as { type?: unknown }).type;
  const check = typeof type === 'string' ? compiled().steps.get(type) : undefined;
  if (!check) return [at('type', `must be one of ${STEP_TYPES.join(', ')}`)];
  if (check.Check(step)) return [];
  return [...check.Errors(step)].map((e) => at(fieldOf(e.path), inWords(e), e.path));
}

/** A JSON pointer as the field name the engine uses too: `/if/ref` → `if.ref` (RFC 6901 escapes undone). */
const fieldOf = (pointer: string): string | null =>
  pointer === ''
    ? null
    : pointer
        .slice(1)
        .split('/')
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
        .join('.');

/** TypeBox's message, with a protocol/text.ts pattern said in words (as daemon/http/request-parsing.ts does for ajv). */
function inWords(e: ValueError): string {
  if (e.type === ValueErrorType.StringPattern) return PATTERN_MESSAGES[String((e.schema as { pattern?: string }).pattern)] ?? e.message;
  if (e.type === ValueErrorType.ObjectAdditionalProperties) return 'is not a known field';
  if (e.type === ValueErrorType.ObjectRequiredProperty) return 'is required';
  return e.message;
}
