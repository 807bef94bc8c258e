// An MCP tool's input schema (plain JSON Schema) as a TypeBox schema, so the tool registry can check a
// model's arguments before the call leaves the brain (kernel/tool-registry.ts compiles TypeBox, which
// refuses a schema without its kind markers). The common keywords are kept: types, properties,
// required, enums, const, bounds, patterns, items, anyOf/oneOf, additionalProperties. What is not
// understood here ($ref, allOf, if/then, formats) becomes "anything" at that place: the server still
// checks it, so a looser check here costs a round trip, never a wrong call.
import { Type, type TSchema, type TObject } from '@sinclair/typebox';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords copied as they are onto the converted schema (annotations and bounds TypeBox checks). */
const KEPT = ['description', 'title', 'default', 'examples', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties'] as const;

function kept(s: Json): Json {
  const out: Json = {};
  for (const k of KEPT) if (s[k] !== undefined) out[k] = s[k];
  // A pattern TypeBox cannot compile (a flag group, a lookbehind some engines lack) is left to the server.
  if (typeof out.pattern === 'string' && !compiles(out.pattern)) delete out.pattern;
  return out;
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch (err) {
    if (err instanceof SyntaxError) return false;
    throw err;
  }
}

const literal = (v: unknown): TSchema | null => (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? Type.Literal(v) : v === null ? Type.Null() : null);

/** One schema of any kind; `depth` bounds a deeply nested (or hostile) schema. */
export function fromJsonSchema(schema: unknown, depth = 0): TSchema {
  if (!isObject(schema) || depth > 32) return Type.Unknown();
  const options = kept(schema);
  if ('const' in schema) return withOptions(literal(schema.const), options);
  if (Array.isArray(schema.enum)) {
    const members = schema.enum.map(literal).filter((m): m is TSchema => m !== null);
    return members.length === schema.enum.length && members.length > 0 ? Type.Union(members, options) : Type.Unknown(options);
  }
  const variants = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (variants) return variants.length === 0 ? Type.Unknown(options) : Type.Union(variants.map((v) => fromJsonSchema(v, depth + 1)), options);
  if (Array.isArray(schema.type)) return Type.Union((schema.type as unknown[]).map((t) => fromJsonSchema({ ...schema, type: t }, depth + 1)), options);
  switch (schema.type) {
    case 'string':
      return Type.String(options);
    case 'number':
      return Type.Number(options);
    case 'integer':
      return Type.Integer(options);
    case 'boolean':
      return Type.Boolean(options);
    case 'null':
      return Type.Null(options);
    case 'array':
      return Type.Array(fromJsonSchema(schema.items, depth + 1), options);
    case 'object':
      return objectOf(schema, options, depth);
    default:
      return isObject(schema.properties) ? objectOf(schema, options, depth) : Type.Unknown(options);
  }
}

function withOptions(schema: TSchema | null, options: Json): TSchema {
  return schema === null ? Type.Unknown(options) : { ...schema, ...options };
}

function objectOf(schema: Json, options: Json, depth: number): TObject {
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const properties: Record<string, TSchema> = {};
  for (const [key, value] of Object.entries(isObject(schema.properties) ? schema.properties : {})) {
    const converted = fromJsonSchema(value, depth + 1);
    properties[key] = required.has(key) ? converted : Type.Optional(converted);
  }
  const extra = schema.additionalProperties;
  const additionalProperties = extra === false ? false : isObject(extra) ? fromJsonSchema(extra, depth + 1) : true;
  return Type.Object(properties, { ...options, additionalProperties });
}

/** A tool's whole input schema: always an object (MCP requires `type: "object"`; anything else takes any object). */
export function toolParameters(inputSchema: unknown): TObject {
  const converted = isObject(inputSchema) ? fromJsonSchema({ ...inputSchema, type: 'object' }) : null;
  return converted !== null && converted.type === 'object' ? (converted as TObject) : Type.Object({}, { additionalProperties: true });
}
