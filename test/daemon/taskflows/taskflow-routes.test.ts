// daemon/taskflows/taskflow-routes.ts: the create body's problems name the bad step and field (property
// tests over generated flows with one step broken); then the six routes through the assembled brain
// with the real engine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Type } from '@sinclair/typebox';
import { CAPABILITIES } from '../../../daemon/capabilities';
import { defineCapability } from '../../../daemon/kernel/capability';
import { AppError } from '../../../daemon/kernel/errors';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { defineTool } from '../../../daemon/kernel/tool';
import type { Taskflow, TaskflowList } from '../../../protocol/taskflows';
import { inProcessBrain } from '../../helpers/assembled-brain';
import { checkCreate, createProblems, STEP_TYPES } from '../../../daemon/taskflows/taskflow-routes';

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

// ── The routes, through the assembled brain with the real engine ─────────────────────────────────
/**
 * The real capabilities plus `rig`, which owns `hold_on`: a tool that runs until the test releases
 * it (for good), so a flow can be caught running. Flow changes are heard on the bus (the engine's taskflow_update).
 */
async function routesRig(t: { after(fn: () => unknown): void }) {
  // The gate opens once; a run that starts after that passes at once.
  let release = (): void => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const rig = defineCapability({
    name: 'rig',
    create: () => ({
      tools: [
        defineTool({
          spec: { name: 'hold_on', description: 'Runs until released.', parameters: Type.Object({}) },
          safety: 'passive',
          run: async () => (await gate, { summary: 'released' }),
        }),
      ],
    }),
  });
  const { brain, token } = await inProcessBrain(t, { capabilities: [...CAPABILITIES, rig] });
  const events: BrainEvent[] = [];
  const waiters: { match: (e: BrainEvent) => boolean; resolve: () => void }[] = [];
  brain.bus.on('routes-test', (e) => {
    events.push(e);
    for (const w of waiters.filter((x) => x.match(e))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  const api = (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    brain.app.inject({ method, url, headers: { authorization: `Bearer ${token}`, ...headers }, ...(payload === undefined ? {} : { payload: payload as string }) });
  return {
    api,
    release: () => release(),
    /** Resolves at the first flow event (already heard or still to come) for `id` with `status`, and step `step` in `stepStatus` if given. */
    flowReaches: (id: string, status: string, step?: { index: number; status: string }) =>
      new Promise<void>((resolve) => {
        const match = (e: BrainEvent) => e.type === 'taskflow_update' && e.flowId === id && e.status === status && (step === undefined || (e.step?.index === step.index && e.step.status === step.status));
        if (events.some(match)) resolve();
        else waiters.push({ match, resolve });
      }),
    create: async (body: unknown): Promise<Taskflow> => {
      const r = await api('POST', '/api/taskflows', body);
      assert.equal(r.statusCode, 201, r.body);
      return r.json<Taskflow>();
    },
  };
}

const envelopeOf = (r: { json<T>(): T }) => r.json<{ error: { code: string; message: string; details: Record<string, unknown> | null } }>().error;
const hour = { type: 'wait', seconds: 3600 } as const;

void test('create, show and list: 201 with the flow, the timeline by id, filters, newest first', async (t) => {
  const rig = await routesRig(t);
  const a = await rig.create({ title: 'Morning', steps: [hour, { type: 'note', text: 'coffee' }], session_id: 'kitchen', context: { cups: 2 } });
  assert.equal(a.title, 'Morning');
  assert.equal(a.session_id, 'kitchen');
  assert.deepEqual(a.context, { cups: 2 });
  assert.deepEqual(a.steps.map((s) => [s.index, s.type, s.input]), [[0, 'wait', hour], [1, 'note', { type: 'note', text: 'coffee' }]]);
  await rig.flowReaches(a.id, 'waiting');
  const b = await rig.create({ title: 'Evening', steps: [hour] });
  assert.equal(b.session_id, 'dashboard', 'a flow without a session belongs to the dashboard');
  await rig.flowReaches(b.id, 'waiting');

  const shown = await rig.api('GET', `/api/taskflows/${a.id}`);
  assert.equal(shown.statusCode, 200, shown.body);
  const flow = shown.json<Taskflow>();
  assert.equal(flow.status, 'waiting');
  assert.deepEqual(flow.history.map((h) => h.to).slice(0, 3), ['queued', 'running', 'waiting']);
  assert.deepEqual(flow.steps[0]!.history.map((h) => h.to).at(-1), 'waiting');

  const list = async (query: string) => {
    const r = await rig.api('GET', `/api/taskflows${query}`);
    assert.equal(r.statusCode, 200, `${query}: ${r.body}`);
    return r.json<TaskflowList>();
  };
  const all = await list('');
  assert.equal(all.count, 2);
  assert.deepEqual(all.taskflows.map((f) => f.id), [b.id, a.id], 'newest first');
  assert.equal('steps' in all.taskflows[0]! || 'history' in all.taskflows[0]!, false, 'a summary has no steps or history');
  assert.deepEqual((await list('?session_id=kitchen')).taskflows.map((f) => f.id), [a.id]);
  assert.deepEqual((await list('?status=waiting&limit=1')), { count: 2, taskflows: [all.taskflows[0]!] });
  assert.deepEqual(await list('?status=completed'), { count: 0, taskflows: [] });
  assert.deepEqual(await list('?session_id=nobody'), { count: 0, taskflows: [] });
});

void test('limit: an integer 1 to 500; anything else, an unknown status or parameter is a 400, never clamped', async (t) => {
  const rig = await routesRig(t);
  for (const limit of ['1', '500', '100']) assert.equal((await rig.api('GET', `/api/taskflows?limit=${limit}`)).statusCode, 200);
  for (const bad of ['0', '501', '-1', '1.5', 'ten', '', '1e400', 'Infinity', '99999999999999999999']) {
    const r = await rig.api('GET', `/api/taskflows?limit=${encodeURIComponent(bad)}`);
    assert.equal(r.statusCode, 400, `limit=${bad}: ${r.body}`);
    assert.equal(envelopeOf(r).code, 'BAD_REQUEST');
  }
  for (const query of ['?status=done', '?status=', '?colour=red', '?session_id=']) assert.equal((await rig.api('GET', `/api/taskflows${query}`)).statusCode, 400, query);
});

void test('a bad step is a 400 naming the step and field, from the schema or from the engine; nothing is stored', async (t) => {
  const rig = await routesRig(t);
  const refused: [unknown, number | null, string | null][] = [
    [{ title: 'x', steps: [{ type: 'note', text: 'a' }, hour, { type: 'tool', tool: 7 }] }, 2, 'tool'],
    [{ title: 'x', steps: [{ type: 'note', text: 'a' }, { type: 'teleport' }] }, 1, 'type'],
    [{ title: 'x', steps: [{ type: 'wait', seconds: 5, colour: 'red' }] }, 0, 'colour'],
    [{ title: 'x', steps: [{ type: 'branch', if: { ref: 'x', op: 'eq' }, goto: 0 }] }, 0, 'if.ref'],
    [{ title: '', steps: [hour] }, null, 'title'],
    [{ title: 'x', steps: [] }, null, 'steps'],
    // Right shape, wrong meaning: the engine's validation, with the same details.
    [{ title: 'x', steps: [{ type: 'note', text: 'a' }, { type: 'wait', seconds: 5, until: '2030-01-01T00:00:00Z' }] }, 1, null],
    [{ title: 'x', steps: [{ type: 'tool', tool: 'no_such_tool' }] }, 0, 'tool'],
  ];
  for (const [body, step, field] of refused) {
    const r = await rig.api('POST', '/api/taskflows', body);
    assert.equal(r.statusCode, 400, `${JSON.stringify(body)}: ${r.body}`);
    const e = envelopeOf(r);
    assert.equal(e.code, 'BAD_REQUEST');
    assert.equal(e.details?.step, step, r.body);
    if (field !== null) assert.equal(e.details?.field, field, r.body);
    else assert.equal(typeof e.details?.field, 'string', r.body);
  }
  for (const [payload, headers] of [['{"title": "x", "steps": [', { 'content-type': 'application/json' }], ['', { 'content-type': 'application/json' }]] as const) {
    const r = await rig.api('POST', '/api/taskflows', payload, headers);
    assert.equal(r.statusCode, 400, `${payload}: ${r.body}`);
  }
  assert.equal((await rig.api('GET', '/api/taskflows')).json<TaskflowList>().count, 0, 'nothing was stored');
});

void test('unknown ids are 404 on every route', async (t) => {
  const rig = await routesRig(t);
  for (const [method, url] of [['GET', '/api/taskflows/flw_nope'], ['POST', '/api/taskflows/flw_nope/resume'], ['POST', '/api/taskflows/flw_nope/wait'], ['POST', '/api/taskflows/flw_nope/cancel']] as const) {
    const r = await rig.api(method, url);
    assert.equal(r.statusCode, 404, `${method} ${url}: ${r.body}`);
    assert.deepEqual(envelopeOf(r).details, { taskflow: 'flw_nope' });
  }
});

void test('cancel: a live flow is cancelled once; a second cancel, a resume and a wait are 409 with the status', async (t) => {
  const rig = await routesRig(t);
  const flow = await rig.create({ title: 'Later', steps: [hour] });
  await rig.flowReaches(flow.id, 'waiting');
  const cancelled = await rig.api('POST', `/api/taskflows/${flow.id}/cancel`, { reason: 'changed my mind' });
  assert.equal(cancelled.statusCode, 200, cancelled.body);
  assert.equal(cancelled.json<Taskflow>().status, 'cancelled');
  assert.match(cancelled.json<Taskflow>().history.at(-1)!.reason, /changed my mind/);
  for (const action of ['cancel', 'resume', 'wait']) {
    const r = await rig.api('POST', `/api/taskflows/${flow.id}/${action}`);
    assert.equal(r.statusCode, 409, `${action}: ${r.body}`);
    assert.equal(envelopeOf(r).code, 'CONFLICT');
    assert.equal(envelopeOf(r).details?.status, 'cancelled');
  }
});

void test('a completed flow is never overwritten by a cancel', async (t) => {
  const rig = await routesRig(t);
  const flow = await rig.create({ title: 'Quick', steps: [{ type: 'tool', tool: 'hold_on' }] });
  await rig.flowReaches(flow.id, 'running', { index: 0, status: 'running' });
  rig.release();
  await rig.flowReaches(flow.id, 'completed');
  const r = await rig.api('POST', `/api/taskflows/${flow.id}/cancel`);
  assert.equal(r.statusCode, 409, r.body);
  assert.equal(envelopeOf(r).details?.status, 'completed');
  assert.equal((await rig.api('GET', `/api/taskflows/${flow.id}`)).json<Taskflow>().status, 'completed');
});

void test('wait pauses a running flow until a time; a bad time is a 400; resume runs it on', async (t) => {
  const rig = await routesRig(t);
  const flow = await rig.create({ title: 'Pausable', steps: [{ type: 'tool', tool: 'hold_on' }, { type: 'tool', tool: 'status' }] });
  await rig.flowReaches(flow.id, 'running', { index: 0, status: 'running' });
  for (const bad of [{ until: '2030-02-30T00:00:00Z' }, { until: '2030-01-01T00:00:00' }, { until: 'soon' }, { until: -1 }, { until: true }, { when: 5 }]) {
    const r = await rig.api('POST', `/api/taskflows/${flow.id}/wait`, bad);
    assert.equal(r.statusCode, 400, `${JSON.stringify(bad)}: ${r.body}`);
  }
  const paused = await rig.api('POST', `/api/taskflows/${flow.id}/wait`, { until: '2030-01-01T01:00:00+01:00' });
  assert.equal(paused.statusCode, 200, paused.body);
  assert.equal(paused.json<Taskflow>().status, 'waiting');
  assert.equal(paused.json<Taskflow>().wait_until, Date.UTC(2030, 0, 1) / 1000);
  assert.equal((await rig.api('POST', `/api/taskflows/${flow.id}/wait`)).statusCode, 409, 'a waiting flow is not paused again');
  rig.release();
  await rig.flowReaches(flow.id, 'waiting', { index: 0, status: 'succeeded' });
  const resumed = await rig.api('POST', `/api/taskflows/${flow.id}/resume`);
  assert.equal(resumed.statusCode, 200, resumed.body);
  await rig.flowReaches(flow.id, 'completed');
  const done = (await rig.api('GET', `/api/taskflows/${flow.id}`)).json<Taskflow>();
  assert.deepEqual(done.steps.map((s) => s.status), ['succeeded', 'succeeded']);
  assert.equal((await rig.api('POST', `/api/taskflows/${flow.id}/resume`, { decision: 'sometimes' })).statusCode, 400);
  assert.equal(envelopeOf(await rig.api('POST', `/api/taskflows/${flow.id}/resume`)).details?.status, 'completed');
});
