// MCP input schemas (plain JSON Schema) as TypeBox: what the tool registry's compiled check accepts
// and refuses matches the JSON schema for the keywords kept; what is not understood accepts anything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { toolParameters } from '../../../daemon/mcp/json-schema';

const check = (schema: unknown) => TypeCompiler.Compile(toolParameters(schema));

void test('objects with required and optional properties, types, bounds, enums and additionalProperties', () => {
  const c = check({
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1, description: 'where' },
      count: { type: 'integer', minimum: 1, maximum: 10 },
      mode: { enum: ['ro', 'rw'] },
      tags: { type: 'array', items: { type: 'string' } },
      either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
      maybe: { type: ['string', 'null'] },
    },
    required: ['path'],
    additionalProperties: false,
    $schema: 'http://json-schema.org/draft-07/schema#',
  });
  assert.ok(c.Check({ path: 'a' }));
  assert.ok(c.Check({ path: 'a', count: 3, mode: 'ro', tags: ['x'], either: 2, maybe: null }));
  assert.ok(!c.Check({}), 'required');
  assert.ok(!c.Check({ path: '' }), 'minLength');
  assert.ok(!c.Check({ path: 'a', count: 11 }), 'maximum');
  assert.ok(!c.Check({ path: 'a', count: 1.5 }), 'integer');
  assert.ok(!c.Check({ path: 'a', mode: 'x' }), 'enum');
  assert.ok(!c.Check({ path: 'a', tags: [1] }), 'items');
  assert.ok(!c.Check({ path: 'a', either: true }), 'anyOf');
  assert.ok(!c.Check({ path: 'a', other: 1 }), 'additionalProperties false');
});

void test('what is not understood ($ref, allOf, a bad pattern) accepts anything there; no schema is any object', () => {
  const c = check({ type: 'object', properties: { a: { $ref: '#/defs/x' }, b: { allOf: [{ type: 'string' }] }, c: { type: 'string', pattern: '(?<=' } } });
  assert.ok(c.Check({ a: 1, b: 2, c: 'x' }));
  assert.ok(check(undefined).Check({ anything: true }));
  assert.ok(check({ type: 'object' }).Check({ extra: 1 }), 'additionalProperties defaults to allowed');
  assert.ok(!check({ type: 'object' }).Check('text'));
});

void test('a hostile, deeply nested schema is bounded', () => {
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 1000; i++) deep = { type: 'object', properties: { x: deep } };
  assert.ok(check(deep).Check({}));
});
