// How the brain parses requests before a handler sees them: ajv options for every route schema, the
// router's path-parameter limit, and the JSON body parser. Kept apart from app.ts so parsing rules
// (what is coerced, what is refused, what an empty body means) are one file with one test.
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

/** ajv options for route schemas (fastify's `ajv.customOptions`). */
export const ajvOptions = { allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: false } as const;

/** find-my-way's limit on one path parameter (fastify's default is 100). */
export const maxParamLength = 100;

export function routerOptions(): Pick<FastifyServerOptions, 'ajv'> & { maxParamLength: number } {
  return { ajv: { customOptions: { ...ajvOptions } }, maxParamLength };
}

/** Body parsers beyond fastify's defaults. */
export function installBodyParsers(_app: FastifyInstance): void {
  // fastify's default JSON parser stays in place for now.
}
