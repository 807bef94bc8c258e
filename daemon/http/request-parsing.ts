// How the brain parses requests before a handler sees them: ajv options for every route schema, the
// router's path-parameter limit, and the JSON body parser. Kept apart from app.ts so parsing rules
// (what is coerced, what is refused, what an empty body means) are one file with one test.
// docs/api.md "Input rules" describes them for clients.
import { OptionalKind } from '@sinclair/typebox';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { MAX_ID_LENGTH, PATTERN_MESSAGES } from '../../protocol/text';

/**
 * ajv options for query strings, path parameters and headers (fastify's `ajv.customOptions`): these
 * arrive as strings, so numbers and booleans are coerced from them.
 */
export const ajvOptions = { allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: false } as const;

/**
 * JSON bodies are typed already: nothing is coerced (`{"text": 123}` and `{"enabled": "false"}` are 400,
 * not "123" and false). A PATCH changes only the fields it names, so no default is filled in.
 */
const bodyOptions = { ...ajvOptions, coerceTypes: false } as const;
const patchBodyOptions = { ...bodyOptions, useDefaults: false } as const;

/** find-my-way's limit on one path parameter: the longest id a schema accepts (fastify's default is 100). */
export const maxParamLength = MAX_ID_LENGTH;

/** The route fastify hands a validator compiler. */
export interface ValidatorRoute {
  schema: unknown;
  method?: string | string[];
  url?: string;
  httpPart?: string;
}

/** One ajv error, as fastify and daemon/http/error-handler.ts read it. */
export interface ValidationError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

export type Validate = ((data: unknown) => unknown) & { errors?: ValidationError[] | null };
type CompileRoute = (route: ValidatorRoute) => Validate;
/** @fastify/ajv-compiler's factory: one pooled ajv instance per distinct set of custom options. */
export type AjvFactory = (externalSchemas: unknown, options: { customOptions?: object }) => CompileRoute;

/** The ajv options for one part of one route. */
export function ajvOptionsFor(route: Pick<ValidatorRoute, 'httpPart' | 'method'>): object {
  if (route.httpPart !== 'body') return ajvOptions;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return methods.includes('PATCH') ? patchBodyOptions : bodyOptions;
}

/**
 * A validator compiler that picks ajv options per request part (ajvOptionsFor) and adds what ajv
 * itself does not check: a coerced number must be finite (ajv turns "Infinity" and "1e309" into
 * Infinity and then skips minimum/maximum), an optional body may be absent, and a string refused by
 * a protocol/text.ts pattern says why in words.
 */
export function partValidators(ajv: AjvFactory, externalSchemas: unknown, options: { customOptions?: object }): CompileRoute {
  const pools = new Map<object, CompileRoute>();
  return (route) => {
    const part = ajvOptionsFor(route);
    let compile = pools.get(part);
    if (!compile) pools.set(part, (compile = ajv(externalSchemas, { ...options, customOptions: { ...options.customOptions, ...part } })));
    return checked(compile(route), route);
  };
}

function checked(validate: Validate, route: ValidatorRoute): Validate {
  const coerced = route.httpPart === 'querystring' || route.httpPart === 'params';
  const optionalBody = route.httpPart === 'body' && isOptional(route.schema);
  const out: Validate = (data) => {
    // fastify validates an absent body as null.
    if (optionalBody && data === null) {
      out.errors = null;
      return true;
    }
    const raw = coerced ? rawValues(data) : null;
    let ok = Boolean(validate(data));
    let errors = validate.errors ?? null;
    if (ok && raw) {
      const refused = [...nonFiniteNumbers(data), ...undecimalNumbers(raw, data)];
      if (refused.length > 0) [ok, errors] = [false, refused];
    }
    out.errors = ok ? null : (errors ?? []).map(inWords);
    return ok;
  };
  return out;
}

const isOptional = (schema: unknown): boolean => typeof schema === 'object' && schema !== null && (schema as Record<symbol, unknown>)[OptionalKind] === 'Optional';

/** Query strings and params are flat: a value, or an array of values when a key repeats. */
export function nonFiniteNumbers(data: unknown): ValidationError[] {
  if (typeof data !== 'object' || data === null) return [];
  const out: ValidationError[] = [];
  for (const [key, value] of Object.entries(data)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'number' && !Number.isFinite(v))) {
      out.push({ instancePath: `/${key}`, schemaPath: `#/properties/${key}`, keyword: 'type', params: { type: 'number' }, message: 'must be a finite number' });
    }
  }
  return out;
}

/** The strings of a query or params object before ajv coerces it in place. */
function rawValues(data: unknown): Map<string, unknown> | null {
  if (typeof data !== 'object' || data === null) return null;
  return new Map(Object.entries(data).map(([k, v]) => [k, Array.isArray(v) ? [...(v as unknown[])] : v]));
}

/** A number in a query or path is written in decimal digits: "1e2", "0x10", " 5" and "+5" are refused, not read as 100, 16, 5. */
const DECIMAL = /^-?\d+(\.\d+)?$/;

/** Keys whose value ajv coerced to a number from text that is not plain decimal digits. */
export function undecimalNumbers(raw: ReadonlyMap<string, unknown>, coerced: unknown): ValidationError[] {
  if (typeof coerced !== 'object' || coerced === null) return [];
  const out: ValidationError[] = [];
  for (const [key, value] of Object.entries(coerced)) {
    const before = raw.get(key);
    const pairs: [unknown, unknown][] = Array.isArray(value) && Array.isArray(before) ? value.map((v, i) => [v, before[i]]) : [[value, before]];
    if (pairs.some(([v, b]) => typeof v === 'number' && typeof b === 'string' && !DECIMAL.test(b))) {
      out.push({ instancePath: `/${key}`, schemaPath: `#/properties/${key}`, keyword: 'type', params: { type: 'number' }, message: 'must be a number in decimal digits' });
    }
  }
  return out;
}

function inWords(error: ValidationError): ValidationError {
  if (error.keyword !== 'pattern') return error;
  const message = PATTERN_MESSAGES[String(error.params.pattern)];
  return message === undefined ? error : { ...error, message };
}

/** Router options for Fastify(): ajv options and the path-parameter limit (its refusal is answered by error-handler.ts). */
export function routerOptions(): Pick<FastifyServerOptions, 'ajv'> & { routerOptions: { maxParamLength: number } } {
  // Under routerOptions: fastify 5 warns (FSTDEP022) at every start about a top-level maxParamLength.
  return { ajv: { customOptions: { ...ajvOptions } }, routerOptions: { maxParamLength } };
}

/**
 * The JSON body parser: fastify's own (same prototype-poisoning refusal, same 400 on malformed JSON),
 * except that an empty body is no body. Many clients send `content-type: application/json` on every
 * call, a DELETE or a POST without a body included; a route that needs a body still says so (400
 * "body must be object"), and an optional body (e.g. snapshot restore) may be left out.
 */
export function installBodyParsers(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8'); // parseAs: 'string' hands a string
    if (text.length === 0) {
      done(null, undefined);
      return;
    }
    void parseJson(request, text, done); // fastify's default parser answers through done
  });
}
