// daemon/taskflows/taskflow-routes.ts: the create body's problems name the bad step and field (property
// tests over generated flows with one step broken), ISO times become epoch seconds (and impossible
// dates are refused); then the six routes through the assembled brain with the real engine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AppError } from '../../../daemon/kernel/errors';
import { checkCreate, createProblems, instantSeconds, STEP_TYPES } from '../../../daemon/taskflows/taskflow-routes';

// ── The create body ──────────────────────────────────────────────────────────────────────────────
const words = fc.stringMatching(/^[a-z][a-z ]{0,20}[a-z]$/);
const validStep = fc.oneof(
  fc.record({ type: fc.constant('note'), text: words }),
  fc.record({ type: fc.constant('prompt'), text: words, tools: fc.boolean() }, { requiredKeys: ['type', 'text'] }),
  fc.record({ type: fc.constant('tool'), tool: fc.constantFrom('set_device', 'status'), args: fc.dictionary(fc.constantFrom('device', 'state'), words) }, { requiredKeys: ['type', 'tool'] }),
  fc.record({ type: fc.constant('wait'), seconds: fc.integer({ min: 0, max: 86_400 }) }),
);
const validBody = fc.record({ title: words, steps: fc.array(validStep, { minLength: 1, maxLength: 12 }) });

/** Ways to break one step, and the field each must be blamed on (null: the step itself). */
const breakages: readonly [string, (s: Record<string, unknown>) => unknown, (s: Record<string, unknown>) => string | null][] = [
  ['unknown type', (s) => ({ ...s, type: 'teleport' }), () => 'type'],
  ['no type', ({ type: _t, ...s }) => s, () => 'type'],
  ['not an object', () => 42, () => null],
  ['an array', () => [1], () => null],
  ['an extra field', (s) => ({ ...s, colour: 'red' }), () => 'colour'],
  // A wait's fields are all optional (the engine checks that exactly one is given): its `seconds` is made negative instead.
  ['its main field missing', (s) => (s.type === 'wait' ? { ...s, seconds: -1 } : Object.fromEntries(Object.entries(s).filter(([k]) => k !== mainField(s)))), (s) => mainField(s)],
  ['its main field of the wrong type', (s) => ({ ...s, [mainField(s)]: true }), (s) => mainField(s)],
];
const mainField = (s: Record<string, unknown>): string => ({ note: 'text', prompt: 'text', tool: 'tool', wait: 'seconds' })[s.type as string]!;

void test('a valid body has no problems; one broken step is blamed by its index and field, before any other problem', () => {
  fc.assert(
    fc.property(validBody, fc.nat(), fc.nat(breakages.length - 1), fc.boolean(), (body, at, which, badTitle) => {
      assert.deepEqual(createProblems(body), []);
      assert.equal(checkCreate(body), body);
      const index = at % body.steps.length;
      const [, breakIt, blamed] = breakages[which]!;
      const original = body.steps[index] as Record<string, unknown>;
      const broken = { ...body, ...(badTitle ? { title: '' } : {}), steps: body.steps.map((s, i) => (i === index ? breakIt(s) : s)) };
      const problems = createProblems(broken);
      const first = problems[0]!;
      assert.equal(first.step, index);
      assert.equal(first.field, blamed(original));
      assert.equal(first.path, `body/steps/${index}${first.field === null ? '' : `/${first.field}`}`);
      assert.equal(problems.some((p) => p.path === 'body/title'), badTitle, 'the other problems are listed too');
      assert.equal(new Set(problems.map((p) => p.path)).size, problems.length, 'one problem per place');
    }),
  );
});

void test('checkCreate: a 400 in the envelope whose details carry step, field, path and the fields', () => {
  const body = { title: 'Morning', steps: [{ type: 'note', text: 'hi' }, { type: 'wait', seconds: 5 }, { type: 'tool', tool: '' }] };
  assert.throws(
    () => checkCreate(body),
    (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.status, 400);
      assert.equal(err.code, 'BAD_REQUEST');
      assert.match(err.message, /^invalid taskflow: step 2: body\/steps\/2\/tool /);
      const d = err.details as { step: number; field: string; path: string; fields: { path: string; message: string }[] };
      assert.deepEqual([d.step, d.field, d.path], [2, 'tool', 'body/steps/2/tool']);
      assert.deepEqual(d.fields.map((f) => f.path), ['body/steps/2/tool']);
      return true;
    },
  );
  for (const [bad, field] of [
    [{ steps: [{ type: 'note', text: 'x' }] }, 'title'],
    [{ title: 'x', steps: [] }, 'steps'],
    [{ title: 'x', steps: [{ type: 'note', text: 'x' }], schedule: 5 }, 'schedule'],
    [{ title: 'x\u0000y', steps: [{ type: 'note', text: 'x' }] }, 'title'],
  ] as const) {
    const [first] = createProblems(bad);
    assert.deepEqual([first?.step, first?.field], [null, field], JSON.stringify(bad));
  }
  assert.match(createProblems({ title: 'x\u0000y', steps: [{ type: 'note', text: 'x' }] })[0]!.message, /one line/, 'a pattern is said in words');
  for (const notObject of [undefined, null, 'x', [1], 5]) assert.deepEqual(createProblems(notObject), [{ path: 'body', message: 'must be an object', step: null, field: null }]);
  assert.deepEqual(STEP_TYPES, ['tool', 'prompt', 'wait', 'note', 'branch']);
});

void test('a body with thousands of bad steps lists at most 20 problems', () => {
  const steps = Array.from({ length: 1000 }, () => ({ type: 'nope' }));
  const problems = createProblems({ title: 'x', steps });
  assert.ok(problems.length <= 21, String(problems.length));
  assert.deepEqual(problems.slice(0, 3).map((p) => p.step), [0, 1, 2]);
});

// ── Times ────────────────────────────────────────────────────────────────────────────────────────
const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

void test('instantSeconds: any ISO time with Z or an offset is the epoch seconds it names', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }), (ms, offsetMinutes) => {
      assert.ok(Math.abs(instantSeconds(new Date(ms).toISOString())! - ms / 1000) < 1e-6);
      const local = new Date(ms + offsetMinutes * 60_000);
      const zone = `${offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offsetMinutes) / 60))}:${pad(Math.abs(offsetMinutes) % 60)}`;
      const text = `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}${zone}`;
      const got = instantSeconds(text);
      if (ms + offsetMinutes * 60_000 < 0 || local.getUTCFullYear() < 1970) return; // a local date before 1970 is refused
      assert.equal(got, Math.floor(ms / 1000));
    }),
  );
});

void test('instantSeconds refuses times without a zone, impossible dates and anything else', () => {
  for (const bad of ['2026-02-30T00:00Z', '2026-02-29T00:00Z', '2026-13-01T00:00Z', '2026-01-01T24:00Z', '2026-01-01T10:60Z', '2026-01-01T10:00:60Z', '2026-01-01T10:00', '2026-01-01', '1969-12-31T23:59:59Z', '2026-01-01T10:00+24:00', 'tomorrow', '', ' 2026-01-01T10:00Z', '2026-01-01T10:00Z ']) {
    assert.equal(instantSeconds(bad), undefined, bad);
  }
  assert.equal(instantSeconds('2028-02-29T00:00:00Z'), Date.UTC(2028, 1, 29) / 1000, 'a leap day exists');
  assert.equal(instantSeconds('2026-05-01t07:30:00.250z'), Date.UTC(2026, 4, 1, 7, 30) / 1000 + 0.25);
  assert.equal(instantSeconds(1_780_000_000.5), 1_780_000_000.5);
  for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) assert.equal(instantSeconds(bad), undefined);
});

void test('a nested field is named as the engine names it: if.ref, args.x', () => {
  const [first] = createProblems({ title: 'x', steps: [{ type: 'branch', if: { ref: 'a', op: 'eq' }, goto: 0 }] });
  assert.deepEqual([first?.step, first?.field, first?.path], [0, 'if.ref', 'body/steps/0/if/ref']);
});
