// daemon/taskflows/templates.ts: references in step inputs (docs/taskflows.md "Templates") are dotted
// paths over plain data. A whole-string reference keeps the value's type, an embedded one is written
// into the text; a missing path names how far it got; prototype segments are refused; nothing is ever
// evaluated. Property tests: any string resolves or fails with a TemplateError only, a value without
// "{{" comes back unchanged, and a generated path into generated data resolves to the value there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkReferences, lookup, references, resolve, TemplateError, type Scope } from '../../../daemon/taskflows/templates';

const scope = (over: Partial<Scope> = {}): Scope => ({
  steps: [
    { status: 'succeeded', result: { temp: 17.5, rooms: ['hall', 'attic'], nested: { ok: true, none: null } } },
    { status: 'failed', result: null },
    { status: 'succeeded', result: 'plain text' },
  ],
  context: { city: 'Berlin', count: 3, list: [1, 2], flag: false },
  flow: { id: 'flw_1', title: 'Morning', session_id: 'ses_1' },
  now: () => '2026-11-25T07:00:00.000Z',
  ...over,
});

const templateError = (fn: () => unknown, message: RegExp): void =>
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof TemplateError, String(err));
    assert.match(err.message, message);
    return true;
  });

void test('references lists every path in strings at any depth, and nothing else', () => {
  assert.deepEqual(references({ a: '{{steps.0.result}} and {{ context.city }}', b: ['x', { c: '{{flow.id}}' }], n: 5, k: null }), ['steps.0.result', 'context.city', 'flow.id']);
  assert.deepEqual(references('no reference, { single } braces, {{ not a path! }}'), []);
  assert.deepEqual(references(42), []);
  assert.deepEqual(references({ '{{context.key}}': 'keys are not read' }), []);
});

void test('checkReferences: earlier steps only, known roots, result or status, flow fields, bare now, no prototype, no stray {{', () => {
  const ok = ['{{steps.0.result.temp}}', '{{steps.1.status}}', '{{steps.1}}', '{{context.city}}', '{{context}}', '{{flow.id}}', '{{now}}', 'at {{now}} in {{context.city}}', 'single { braces } are text'];
  for (const value of ok) assert.equal(checkReferences({ line: value }, 2), null, value);
  const bad: [string, RegExp][] = [
    ['{{steps.2.result}}', /only earlier steps \(0 to 1\)/],
    ['{{steps.9}}', /only earlier steps/],
    ['{{steps.first.result}}', /only earlier steps/],
    ['{{steps}}', /only earlier steps/],
    ['{{steps.0.output}}', /a step's result or status, e\.g\. \{\{steps\.0\.result\}\}/],
    ['{{env.HOME}}', /references start with steps, context, flow, now/],
    ['{{now.year}}', /\{\{now\}\} has no fields/],
    ['{{flow}}', /\{\{flow\.id\}\}, \{\{flow\.title\}\} or \{\{flow\.session_id\}\}/],
    ['{{flow.id.x}}', /\{\{flow\.id\}\}/],
    ['{{context.__proto__}}', /"__proto__" may not appear/],
    ['{{context.a.constructor}}', /"constructor" may not appear/],
    ['{{steps.0.result.prototype}}', /"prototype" may not appear/],
    ['{{ context.city + 1 }}', /has a \{\{ that is not a reference/],
    ['{{context.city', /has a \{\{ that is not a reference/],
    ['fine {{context.city}} then {{oops', /has a \{\{ that is not a reference/],
  ];
  for (const [value, message] of bad) {
    const problem = checkReferences({ deep: [{ line: value }] }, 2);
    assert.ok(problem !== null, value);
    assert.match(problem, message, value);
  }
  assert.match(checkReferences('{{steps.0.result}}', 0) ?? '', /only earlier steps \(0 to -1\)/, 'the first step has no earlier step');
});

void test('resolve: a whole-string reference keeps its type, an embedded one is written in (strings as they are, the rest as JSON)', () => {
  const s = scope();
  assert.equal(resolve('{{steps.0.result.temp}}', s), 17.5);
  assert.equal(resolve('  {{ steps.0.result.temp }}  '.trim(), s), 17.5);
  assert.deepEqual(resolve('{{steps.0.result.rooms}}', s), ['hall', 'attic']);
  assert.equal(resolve('{{steps.0.result.nested.ok}}', s), true);
  assert.equal(resolve('{{steps.0.result.nested.none}}', s), null);
  assert.equal(resolve('{{steps.0.status}}', s), 'succeeded');
  assert.equal(resolve('{{steps.2}}', s), 'plain text', 'a step without a field is its result');
  assert.equal(resolve('{{context.flag}}', s), false);
  assert.equal(resolve('{{context.list.1}}', s), 2);
  assert.equal(resolve('{{context.list.length}}', s), 2);
  assert.deepEqual(resolve('{{flow}}', s), { id: 'flw_1', title: 'Morning', session_id: 'ses_1' });
  assert.equal(resolve('{{now}}', s), '2026-11-25T07:00:00.000Z');
  assert.equal(resolve('{{steps.0.result.temp}} °C in {{context.city}}', s), '17.5 °C in Berlin');
  assert.equal(resolve('rooms: {{steps.0.result.rooms}}, flag {{context.flag}}, none {{steps.0.result.nested.none}}', s), 'rooms: ["hall","attic"], flag false, none null');
  assert.equal(resolve('{{flow.title}}{{flow.id}}', s), 'Morningflw_1', 'two references are not one whole reference');
  const input = { type: 'tool', args: { line: '{{context.city}}', n: ['{{context.count}}', 4] } };
  assert.deepEqual(resolve(input, s), { type: 'tool', args: { line: 'Berlin', n: [3, 4] } });
  assert.deepEqual(input, { type: 'tool', args: { line: '{{context.city}}', n: ['{{context.count}}', 4] } }, 'the input is not changed');
});

void test('lookup: a missing path names how far it got; a step that has not succeeded is named with its status', () => {
  const s = scope();
  templateError(() => lookup('steps.0.result.humidity', s), /^\{\{steps\.0\.result\.humidity\}\}: steps\.0\.result has no humidity$/);
  templateError(() => lookup('steps.0.result.nested.ok.deeper', s), /steps\.0\.result\.nested\.ok has no deeper$/);
  templateError(() => lookup('steps.0.result.rooms.5', s), /steps\.0\.result\.rooms has no 5$/);
  templateError(() => lookup('steps.0.result.rooms.first', s), /steps\.0\.result\.rooms has no first$/);
  templateError(() => lookup('steps.0.result.nested.none.x', s), /steps\.0\.result\.nested\.none has no x$/);
  templateError(() => lookup('context.town', s), /: context has no town$/);
  templateError(() => lookup('flow.owner', s), /: flow has no owner$/);
  templateError(() => lookup('steps.1.result', s), /step 1 has not succeeded \(it is failed\)/);
  templateError(() => lookup('steps.7', s), /step 7 has not succeeded \(it is missing\)/);
  templateError(() => lookup('env.HOME', s), /unknown reference/);
  templateError(() => resolve({ a: ['x {{context.town}} y'] }, s), /context has no town/);
});

void test('no prototype is reachable: __proto__, constructor and prototype are refused, inherited properties do not exist', () => {
  const s = scope();
  for (const path of ['context.__proto__', 'context.constructor', 'steps.0.result.constructor.name', 'flow.__proto__.toString', 'steps.0.result.prototype']) {
    templateError(() => lookup(path, s), /may not appear in a reference/);
  }
  for (const path of ['context.toString', 'context.hasOwnProperty', 'steps.0.result.rooms.map', 'steps.0.result.valueOf']) {
    templateError(() => lookup(path, s), /has no/);
  }
  // An own "__proto__" key (JSON.parse makes one) is still refused.
  templateError(() => lookup('context.__proto__', scope({ context: JSON.parse('{"__proto__": {"polluted": 1}}') as Record<string, unknown> })), /may not appear/);
  // A class instance is not plain data: its fields are not walked.
  class Secret {
    token = 'x';
  }
  templateError(() => lookup('context.secret.token', scope({ context: { secret: new Secret() } })), /context\.secret has no token/);
});

void test('nothing is evaluated: expressions stay text or are refused, and no code runs', () => {
  const s = scope();
  const marker = globalThis as { templatePwned?: unknown };
  const attempts = ['{{ globalThis.templatePwned = 1 }}', '${globalThis.templatePwned = 1}', '{{context.city.constructor("return 1")()}}', '{{ (() => { globalThis.templatePwned = 1 })() }}', '{{context["city"]}}'];
  for (const text of attempts) {
    let out: unknown;
    try {
      out = resolve(text, s);
    } catch (err) {
      assert.ok(err instanceof TemplateError, String(err));
      continue;
    }
    assert.equal(out, text, 'what is not a reference is left as it is');
  }
  assert.equal(marker.templatePwned, undefined);
  let called = 0;
  const fn = (): string => {
    called++;
    return 'ran';
  };
  // A function in the scope (never there from JSON) is a value at most: it is not called.
  assert.equal(resolve('{{context.fn}}', scope({ context: { fn } })), fn);
  assert.equal(called, 0);
});

// ── Properties ───────────────────────────────────────────────────────────────────────────────────
const pieces = fc.constantFrom('{{', '}}', '{', '}', '.', ' ', 'steps', 'context', 'flow', 'now', '0', '1', '2', '9', 'result', 'status', 'temp', 'city', 'rooms', 'length', '__proto__', 'constructor', 'prototype', 'id', 'x', '-', '_', '\n', '$');
const templatish = fc.oneof(fc.string(), fc.array(pieces, { maxLength: 14 }).map((p) => p.join('')));

void test('property: resolve of any string yields a value or a TemplateError, never another error', () => {
  fc.assert(
    fc.property(templatish, (text) => {
      try {
        resolve(text, scope());
      } catch (err) {
        assert.ok(err instanceof TemplateError, `${JSON.stringify(text)}: ${String(err)}`);
      }
    }),
    { numRuns: 2000 },
  );
});

void test('property: a value without "{{" resolves to itself', () => {
  fc.assert(
    fc.property(
      fc.jsonValue().filter((v) => !JSON.stringify(v).includes('{{')),
      (value) => {
        assert.deepEqual(resolve(value, scope()), value);
      },
    ),
    { numRuns: 500 },
  );
});

const key = fc.stringMatching(/^[a-z_][a-z0-9_-]{0,6}$/).filter((k) => k !== 'constructor' && k !== 'prototype');
const leaf = fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const { tree } = fc.letrec<{ tree: unknown }>((rec) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(rec('tree'), { maxLength: 4 }), fc.dictionary(key, rec('tree'), { maxKeys: 4, noNullPrototype: true })),
}));

/** Walks `value` by `choices` (each picks a child), returning the path taken and the value there. */
function descend(value: unknown, choices: readonly number[]): { path: string[]; at: unknown } {
  const path: string[] = [];
  let at = value;
  for (const c of choices) {
    if (Array.isArray(at) && at.length > 0) {
      const i = c % at.length;
      path.push(String(i));
      at = at[i] as unknown;
    } else if (typeof at === 'object' && at !== null && !Array.isArray(at) && Object.keys(at).length > 0) {
      const k = Object.keys(at)[c % Object.keys(at).length]!;
      path.push(k);
      at = (at as Record<string, unknown>)[k];
    } else break;
  }
  return { path, at };
}

void test('property: a generated path into generated data resolves to the value at the path, whole or embedded', () => {
  fc.assert(
    fc.property(fc.dictionary(key, tree, { minKeys: 1, maxKeys: 4, noNullPrototype: true }), fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), (context, choices) => {
      const { path, at } = descend(context, choices);
      const s = scope({ context, steps: [{ status: 'succeeded', result: context }] });
      for (const ref of [['context', ...path].join('.'), ['steps', '0', 'result', ...path].join('.')]) {
        assert.deepEqual(lookup(ref, s), at);
        assert.deepEqual(resolve(`{{${ref}}}`, s), at);
        assert.equal(resolve(`<{{ ${ref} }}>`, s), `<${typeof at === 'string' ? at : JSON.stringify(at)}>`);
        assert.equal(checkReferences(`{{${ref}}}`, 1), null);
      }
    }),
    { numRuns: 500 },
  );
});

void test('property: a path one segment past the data fails naming the deepest place it reached', () => {
  fc.assert(
    fc.property(fc.dictionary(key, tree, { minKeys: 1, maxKeys: 4, noNullPrototype: true }), fc.array(fc.nat(), { maxLength: 6 }), (context, choices) => {
      const { path, at } = descend(context, choices);
      const missing = Array.isArray(at) ? String(at.length + 1) : 'zz_missing';
      const s = scope({ context, steps: [{ status: 'succeeded', result: context }] });
      for (const reached of [['context', ...path].join('.'), ['steps', '0', 'result', ...path].join('.')]) {
        templateError(() => lookup(`${reached}.${missing}`, s), new RegExp(`: ${reached.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')} has no ${missing}$`));
      }
    }),
    { numRuns: 300 },
  );
});
