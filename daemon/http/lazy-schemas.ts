// Route schemas compiled on first use instead of at start-up. fastify compiles an ajv validator and
// a fast-json-stringify serializer for every route when it boots; with ~80 routes that was ~250 ms
// of the brain's cold start (measured: "started agent" → "listening"), for routes most processes
// never call. These wrap fastify's own default compilers (the same packages, same options), so
// validation and serialization behave exactly as before — only when the cost is paid changes.
// The trade-off: a schema that cannot compile fails its first request (500) instead of start-up;
// test/daemon/http/lazy-schemas.test.ts pins that behaviour; each route's own tests reach its schemas.
import AjvCompiler from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';
import { partValidators, type AjvFactory } from './request-parsing';

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
// The shapes fastify actually uses: a validator is called and its `.errors` read (ajv's convention);
// a serializer turns a document into a string. The packages' own typings demand full ajv objects,
// so the wrappers are typed here and cast once, at the fastify boundary.
type Validate = ((data: unknown) => unknown) & { errors?: unknown };
type ValidatorFactory = (externalSchemas: unknown, options: unknown) => (route: unknown) => Validate;
type SerializerFactory = (externalSchemas: unknown, options: unknown) => (route: unknown) => (doc: unknown) => string;

export function lazySchemaCompilers(): Factories {
  const ajv = AjvCompiler() as unknown as ValidatorFactory;
  const fjs = SerializerSelector() as unknown as SerializerFactory;
  const buildValidator: ValidatorFactory = (externalSchemas, options) => {
    // ajv options per request part (no coercion of JSON bodies) and the checks ajv lacks: request-parsing.ts.
    const compile = partValidators(ajv as unknown as AjvFactory, externalSchemas, options as { customOptions?: object }) as (route: unknown) => Validate;
    return (route) => {
      let compiled: Validate | undefined;
      const validate: Validate = (data) => {
        compiled ??= compile(route);
        const result = compiled(data);
        validate.errors = compiled.errors;
        return result;
      };
      return validate;
    };
  };
  const buildSerializer: SerializerFactory = (externalSchemas, options) => {
    const compile = fjs(externalSchemas, options);
    return (route) => {
      let compiled: ((doc: unknown) => string) | undefined;
      return (doc) => (compiled ??= compile(route))(doc);
    };
  };
  return { buildValidator, buildSerializer } as unknown as Factories;
}
