// protocol/schema-problems.ts: a schema's first problems as one line, bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { schemaProblems } from '../../protocol/schema-problems';

void test('the first problems with their paths, at most `max`, the root written "/"', () => {
  const check = TypeCompiler.Compile(Type.Object({ a: Type.String(), b: Type.Integer(), c: Type.Boolean() }));
  assert.equal(schemaProblems(check, { a: 1, b: 'x', c: 'y' }, 2).split('; ').length, 2);
  assert.match(schemaProblems(check, { a: 1, b: 2, c: true }, 5), /^\/a Expected string$/);
  assert.match(schemaProblems(TypeCompiler.Compile(Type.String()), 7, 5), /^\/ Expected string$/);
  assert.equal(schemaProblems(check, { a: 'x', b: 2, c: true }, 5), '');
});
