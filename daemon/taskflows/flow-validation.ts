// What a flow must be before it is stored (POST /api/taskflows, start_taskflow): the schema is checked
// at the edge (protocol/taskflows.ts); here the meaning — a tool that exists, exactly one kind of wait,
// a time that parses, a branch that jumps inside the flow and loops only a bounded number of times,
// references to earlier steps only, a schedule croner can read. A problem is an AppError VALIDATION
// whose details name the step index and the field, so a client can point at it.
import { Cron } from 'croner';
import { AppError } from '../kernel/errors';
import type { ToolRegistry } from '../kernel/tool-registry';
import type { CreateTaskflow, StepSpec } from '../../protocol/taskflows';
import { checkReferences, references } from './templates';

/** The first problem of the flow, thrown. */
export function validateFlow(input: CreateTaskflow, tools: Pick<ToolRegistry, 'get' | 'problems'>): void {
  input.steps.forEach((step, index) => {
    const problem = stepProblem(step, index, input.steps.length, tools);
    if (problem) throw new AppError('BAD_REQUEST', `step ${index} (${step.type}): ${problem.message}`, { step: index, field: problem.field });
  });
  if (input.timezone !== undefined && !validZone(input.timezone)) throw new AppError('BAD_REQUEST', `timezone: ${input.timezone} is not an IANA time zone (like Europe/Berlin)`, { field: 'timezone' });
  if (input.schedule !== undefined) {
    const problem = scheduleProblem(input.schedule, input.timezone);
    if (problem) throw new AppError('BAD_REQUEST', `schedule: ${problem}`, { field: 'schedule' });
  }
}

function stepProblem(step: StepSpec, index: number, count: number, tools: Pick<ToolRegistry, 'get' | 'problems'>): { field: string; message: string } | null {
  const refs = (field: string, value: unknown): { field: string; message: string } | null => {
    const message = checkReferences(value, index);
    return message ? { field, message } : null;
  };
  switch (step.type) {
    case 'tool': {
      if (!tools.get(step.tool)) return { field: 'tool', message: `there is no tool named ${step.tool}` };
      const args = step.args ?? {};
      const bad = refs('args', args);
      if (bad) return bad;
      // Arguments with references are checked when the step runs, once they are resolved.
      if (references(args).length === 0) {
        const problems = tools.problems(step.tool, args);
        if (problems.length > 0) return { field: 'args', message: `invalid arguments for ${step.tool}: ${problems.join('; ')}` };
      }
      return null;
    }
    case 'prompt':
      return refs('text', step.text);
    case 'note':
      return refs('text', step.text);
    case 'wait': {
      const kinds = [step.until !== undefined, step.seconds !== undefined, step.event !== undefined].filter(Boolean).length;
      if (kinds !== 1) return { field: 'until', message: 'a wait needs exactly one of until, seconds or event' };
      if (step.until !== undefined && parseInstant(step.until) === null) return { field: 'until', message: `${JSON.stringify(step.until)} is not a time: use ISO 8601 with an offset (2026-11-25T07:00:00+01:00) or epoch seconds` };
      if (step.timeout_seconds !== undefined && step.event === undefined) return { field: 'timeout_seconds', message: 'timeout_seconds goes with event' };
      return null;
    }
    case 'branch': {
      if (step.goto > count) return { field: 'goto', message: `goto ${step.goto} is past the end of the flow (${count} steps; ${count} ends it)` };
      if (step.goto <= index && step.max_loops === undefined) return { field: 'max_loops', message: `goto ${step.goto} jumps backwards; give max_loops to bound how often` };
      if (!/^\{\{[^{}]+\}\}$/.test(step.if.ref.trim())) return { field: 'if.ref', message: 'ref is one reference, like {{steps.0.result.temp}}' };
      const bad = refs('if.ref', step.if.ref);
      if (bad) return bad;
      if (step.if.op !== 'exists' && step.if.op !== 'truthy' && step.if.value === undefined) return { field: 'if.value', message: `op ${step.if.op} compares with a value` };
      return null;
    }
  }
}

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** Epoch seconds of an ISO 8601 time with an offset (or Z), or of epoch seconds; null when neither, and before 1970. */
export function parseInstant(value: string | number): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : null;
  // A time without an offset would depend on the brain's zone: refused, not guessed.
  const m = ISO_INSTANT.exec(value);
  if (!m) return null;
  // Date.parse rolls a date that does not exist over (February 30 becomes March 2): refused too.
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((v) => Number(v ?? 0)) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate() || hour > 23 || minute > 59 || second > 59) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) || ms < 0 ? null : ms / 1000;
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch (err) {
    if (err instanceof RangeError) return false;
    throw err;
  }
}

function scheduleProblem(expression: string, timezone: string | undefined): string | null {
  try {
    const next = new Cron(expression, { paused: true, ...(timezone ? { timezone } : {}) }).nextRun();
    return next ? null : `${expression} never occurs again`;
  } catch (err) {
    if (err instanceof TypeError || err instanceof RangeError) return `${expression} is not a cron expression (minute hour day month weekday, e.g. "0 7 * * *"): ${err.message}`;
    throw err;
  }
}

/** The next occurrence of a schedule after `after` (epoch seconds), or null when there is none. */
export function nextOccurrence(expression: string, timezone: string | null, after: number): number | null {
  const next = new Cron(expression, { paused: true, ...(timezone ? { timezone } : {}) }).nextRun(new Date(after * 1000));
  return next ? next.getTime() / 1000 : null;
}
