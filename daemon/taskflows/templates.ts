// Step inputs may reference earlier results and the flow's context (docs/taskflows.md "Templates"):
// `{{steps.2.result.temp}}`, `{{context.city}}`, `{{flow.id}}`, `{{now}}`. A reference is a dotted
// path walked over plain data — own properties and array indices only, never code: no expressions,
// no calls, no prototype (`__proto__`, `constructor`, `prototype` are refused). A string that is exactly
// one reference becomes the referenced value with its type; a reference inside other text is written
// into it (strings as they are, other values as JSON).

/** One `{{ path }}`; a path is a root name and dotted segments. */
const REFERENCE = /\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}$/;
/** Text that opens a reference but is not one (a typo the author should hear about). */
const OPENING = /\{\{/;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
export const ROOTS = ['steps', 'context', 'flow', 'now'] as const;

export interface Scope {
  steps: readonly { status: string; result: unknown }[];
  context: Readonly<Record<string, unknown>>;
  flow: { id: string; title: string; session_id: string };
  now: () => string;
}

/** A reference that cannot be resolved: the step fails with this message. */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

/** Every reference path in `value` (strings at any depth). */
export function references(value: unknown): string[] {
  const out: string[] = [];
  walkStrings(value, (s) => {
    for (const m of s.matchAll(REFERENCE)) out.push(m[1]!);
  });
  return out;
}

/**
 * Why the references of step `index` cannot work, or null: an unknown root, a step that is not
 * earlier, a forbidden segment, or `{{` that is not a reference.
 */
export function checkReferences(value: unknown, index: number): string | null {
  let problem: string | null = null;
  walkStrings(value, (s) => {
    if (problem) return;
    const stripped = s.replace(REFERENCE, '');
    if (OPENING.test(stripped)) problem = `"${s.slice(0, 80)}" has a {{ that is not a reference like {{steps.0.result}} or {{context.name}}`;
    for (const m of s.matchAll(REFERENCE)) {
      problem ??= checkPath(m[1]!, index);
    }
  });
  return problem;
}

function checkPath(path: string, index: number): string | null {
  const [root, ...rest] = path.split('.');
  if (!ROOTS.includes(root as (typeof ROOTS)[number])) return `{{${path}}}: references start with ${ROOTS.join(', ')}`;
  const bad = rest.find((seg) => FORBIDDEN.has(seg));
  if (bad) return `{{${path}}}: "${bad}" may not appear in a reference`;
  if (root === 'steps') {
    const n = Number(rest[0]);
    if (!/^\d+$/.test(rest[0] ?? '') || n >= index) return `{{${path}}}: a step may reference only earlier steps (0 to ${index - 1})`;
    if (rest[1] !== undefined && rest[1] !== 'result' && rest[1] !== 'status') return `{{${path}}}: a step's result or status, e.g. {{steps.${n}.result}}`;
  }
  if (root === 'now' && rest.length > 0) return `{{${path}}}: {{now}} has no fields`;
  if (root === 'flow' && rest.length !== 1) return `{{${path}}}: {{flow.id}}, {{flow.title}} or {{flow.session_id}}`;
  return null;
}

/** `value` with every reference replaced (a new value; the input is not changed). */
export function resolve(value: unknown, scope: Scope): unknown {
  if (typeof value === 'string') return resolveString(value, scope);
  if (Array.isArray(value)) return value.map((v) => resolve(v, scope));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, scope)]));
  return value;
}

function resolveString(s: string, scope: Scope): unknown {
  const whole = WHOLE.exec(s);
  if (whole) return lookup(whole[1]!, scope);
  return s.replace(REFERENCE, (_m, path: string) => {
    const v = lookup(path, scope);
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
}

/** The value at `path`; a missing one is a TemplateError naming how far the path got. */
export function lookup(path: string, scope: Scope): unknown {
  const [root, ...rest] = path.split('.');
  let at: unknown;
  let segments = rest;
  let walked = root!;
  if (root === 'now') return scope.now();
  if (root === 'flow') at = scope.flow;
  else if (root === 'context') at = scope.context;
  else if (root === 'steps') {
    const step = scope.steps[Number(rest[0])];
    if (!step || step.status !== 'succeeded') throw new TemplateError(`{{${path}}}: step ${rest[0]} has not succeeded (it is ${step?.status ?? 'missing'})`);
    at = { status: step.status, result: step.result };
    segments = rest.slice(1);
    walked = `steps.${rest[0]}`;
    if (segments.length === 0) return step.result;
  } else throw new TemplateError(`{{${path}}}: unknown reference`);
  for (const seg of segments) {
    if (FORBIDDEN.has(seg)) throw new TemplateError(`{{${path}}}: "${seg}" may not appear in a reference`);
    const next = child(at, seg);
    if (next === undefined) throw new TemplateError(`{{${path}}}: ${walked} has no ${seg}`);
    at = next;
    walked += `.${seg}`;
  }
  return at;
}

function child(value: unknown, seg: string): unknown {
  if (Array.isArray(value)) return /^\d+$/.test(seg) ? value[Number(seg)] : seg === 'length' ? value.length : undefined;
  if (isPlainObject(value) && Object.prototype.hasOwnProperty.call(value, seg)) return value[seg];
  return undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function walkStrings(value: unknown, visit: (s: string) => void): void {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) for (const v of value) walkStrings(v, visit);
  else if (isPlainObject(value)) for (const v of Object.values(value)) walkStrings(v, visit);
}
