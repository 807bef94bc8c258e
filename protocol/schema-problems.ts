// What a value breaks of a TypeBox schema, as one short line for an error frame or a refusal: the
// first few problems, each "<path> <message>" (the root path is "/").
import type { TSchema } from '@sinclair/typebox';
import type { TypeCheck } from '@sinclair/typebox/compiler';

export function schemaProblems(check: TypeCheck<TSchema>, value: unknown, max: number): string {
  const out: string[] = [];
  for (const e of check.Errors(value)) {
    out.push(`${e.path || '/'} ${e.message}`);
    if (out.length >= max) break;
  }
  return out.join('; ');
}
