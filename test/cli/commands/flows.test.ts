// svc flows against a loopback HTTP server that answers like /api/taskflows: the list as a table, an
// empty hint or JSON, with its filters in the query; show prints the flow and every step's timeline in
// local HH:MM:SS; resume, wait and cancel send their bodies and print the new status; a bad --status
// or --limit is usage (2) without a call; refusals print the brain's message on one line and exit 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { clock, describeFlow, flowsAct, flowsList, flowsShow, listQuery } from '../../../cli/commands/flows';
import { FLOW_STATUSES, TASKFLOW_LIST_LIMIT, type Step, type Taskflow } from '../../../protocol/taskflows';
import { fakeBrain, io } from '../../helpers/cli-rig';

const T0 = 1_780_000_000; // epoch seconds
const step = (index: number, over: Partial<Step>): Step => ({
  id: `stp_${index}`,
  index,
  type: 'note',
  input: { type: 'note', text: 'x' },
  status: 'pending',
  result: null,
  error: null,
  started_at: null,
  finished_at: null,
  approval_request_id: null,
  history: [{ from: null, to: 'pending', at: T0, reason: 'created' }],
  ...over,
});
const flow: Taskflow = {
  id: 'flw_1',
  title: 'Water the\nplants',
  session_id: 'sess-1',
  status: 'running',
  current_step: 1,
  context: {},
  error: null,
  wait_until: null,
  created_at: T0,
  updated_at: T0 + 65,
  started_at: T0 + 1,
  completed_at: null,
  schedule: null,
  parent_id: null,
  history: [
    { from: null, to: 'queued', at: T0, reason: 'created' },
    { from: 'queued', to: 'running', at: T0 + 1, reason: 'started' },
  ],
  steps: [
    step(0, {
      type: 'tool',
      input: { type: 'tool', tool: 'set_device', args: { device: 'pump', state: 'on' } },
      status: 'succeeded',
      history: [
        { from: null, to: 'pending', at: T0, reason: 'created' },
        { from: 'pending', to: 'running', at: T0 + 1, reason: 'started' },
        { from: 'running', to: 'succeeded', at: T0 + 2, reason: 'pump is now on' },
      ],
    }),
    step(1, { type: 'wait', input: { type: 'wait', seconds: 600 }, status: 'waiting', history: [{ from: 'pending', to: 'waiting', at: T0 + 65, reason: 'waits 600 s' }] }),
    step(2, { type: 'tool', input: { type: 'tool', tool: 'run_command' }, status: 'failed', error: 'exit 1\nno such pump', approval_request_id: 'req_9' }),
  ],
};
const { steps: _steps, history: _history, ...summary } = flow;

void test('svc flows list: a table of the flows, newest first, with their status, step and local update time', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [200, { count: 1, taskflows: [summary] }]);
  const { io: cli, text } = io();
  assert.equal(await flowsList(conn, cli, { json: false }), 0);
  assert.deepEqual(seen, [{ method: 'GET', url: '/api/taskflows', body: undefined }]);
  const [head, row, ...rest] = text.out.trimEnd().split('\n');
  assert.match(head!, /^ID\s+STATUS\s+STEP\s+UPDATED\s+SESSION\s+TITLE$/);
  assert.equal(row!.split(/\s{2,}/).join('|'), `flw_1|running|1|${clock(T0 + 65)}|sess-1|Water the plants`);
  assert.deepEqual(rest, []);
});

void test('svc flows list passes --status, --session and --limit as the query; JSON with --json; a hint when empty', async (t) => {
  const { conn, seen } = await fakeBrain(t, (s) => [200, s.url.includes('status=failed') ? { count: 0, taskflows: [] } : { count: 1, taskflows: [summary] }]);
  const { io: j, text: jt } = io();
  assert.equal(await flowsList(conn, j, { status: 'running', session: 'a b', limit: '007', json: true }), 0);
  assert.deepEqual(JSON.parse(jt.out), [summary]);
  const { io: e, text: et } = io();
  assert.equal(await flowsList(conn, e, { status: 'failed', json: false }), 0);
  assert.equal(et.out, 'no failed taskflows\n');
  assert.deepEqual(
    seen.map((s) => s.url),
    ['/api/taskflows?status=running&session_id=a+b&limit=7', '/api/taskflows?status=failed'],
  );
});

void test('svc flows list: a status or limit the brain would refuse is exit 2 without a call', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [200, { count: 0, taskflows: [] }]);
  for (const bad of [{ status: 'done' }, { limit: '0' }, { limit: '501' }, { limit: '1.5' }, { limit: 'ten' }, { limit: '-1' }, { limit: '' }]) {
    const { io: cli, text } = io();
    assert.equal(await flowsList(conn, cli, { ...bad, json: false }), 2, JSON.stringify(bad));
    assert.match(text.err, /^svc: --(status|limit) .*: expected /);
  }
  assert.deepEqual(seen, []);
});

void test('listQuery accepts exactly the statuses and the limits 1-500 the API accepts', () => {
  fc.assert(
    fc.property(fc.oneof(fc.constantFrom(...FLOW_STATUSES), fc.string()), fc.oneof(fc.integer({ min: -10, max: 600 }).map(String), fc.string()), (status, limit) => {
      const q = listQuery({ status, limit });
      const statusOk = (FLOW_STATUSES as readonly string[]).includes(status);
      const limitOk = /^\d+$/.test(limit) && Number(limit) >= TASKFLOW_LIST_LIMIT.min && Number(limit) <= TASKFLOW_LIST_LIMIT.max;
      assert.equal(typeof q === 'string', statusOk && limitOk);
      if (typeof q === 'string') assert.deepEqual(Object.fromEntries(new URLSearchParams(q.slice(1))), { status, limit: String(Number(limit)) });
    }),
  );
});

void test('svc flows show: the flow, its own transitions, then each step with its status and history lines', async (t) => {
  const { conn, seen } = await fakeBrain(t, () => [200, flow]);
  const { io: cli, text } = io();
  assert.equal(await flowsShow(conn, cli, { id: 'flw/1', json: false }), 0);
  assert.equal(seen[0]!.url, '/api/taskflows/flw%2F1', 'the id is one path segment');
  const c = (s: number) => clock(T0 + s);
  assert.equal(
    text.out,
    [
      'flw_1  Water the plants',
      `  status running at step 1, session sess-1, created ${c(0)}`,
      `  ${c(0)}  - → queued  created`,
      `  ${c(1)}  queued → running  started`,
      '',
      '0  tool set_device  succeeded',
      `     ${c(0)}  - → pending  created`,
      `     ${c(1)}  pending → running  started`,
      `     ${c(2)}  running → succeeded  pump is now on`,
      '1  wait 600s  waiting',
      `     ${c(65)}  pending → waiting  waits 600 s`,
      '2  tool run_command  failed (approval req_9)',
      '     error: exit 1 no such pump',
      `     ${c(0)}  - → pending  created`,
      '',
    ].join('\n'),
  );
  const { io: j, text: jt } = io();
  assert.equal(await flowsShow(conn, j, { id: 'flw_1', json: true }), 0);
  assert.deepEqual(JSON.parse(jt.out), flow);
});

void test('describeFlow names a wait, a schedule, a parent and the flow error', () => {
  const out = describeFlow({ ...flow, status: 'failed', wait_until: T0 + 3600, schedule: '0 7 * * *', parent_id: 'flw_0', error: 'step 2 failed', steps: [] });
  assert.match(out, new RegExp(`\\n  waits until ${clock(T0 + 3600)}\\n  schedule 0 7 \\* \\* \\*\\n  a run of flw_0\\n  error: step 2 failed\\n`));
});

void test('clock is the local time of day, HH:MM:SS', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 4_000_000_000 }), (s) => {
      const d = new Date(s * 1000);
      assert.equal(clock(s), `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}:${String(d.getSeconds()).padStart(2, '0')}`);
    }),
  );
});

void test('svc flows resume, wait and cancel send their bodies and print the flow status', async (t) => {
  const answers: Taskflow[] = [
    { ...flow, status: 'running', current_step: 2 },
    { ...flow, status: 'running', current_step: 3 },
    { ...flow, status: 'waiting', wait_until: T0 + 7200 },
    { ...flow, status: 'waiting', wait_until: null },
    { ...flow, status: 'cancelled', current_step: null },
    { ...flow, status: 'completed', current_step: 3 },
  ];
  const { conn, seen } = await fakeBrain(t, () => [200, answers.shift()]);
  const { io: cli, text } = io();
  assert.equal(await flowsAct(conn, cli, 'flw_1', { action: 'resume', decision: 'retry' }), 0);
  assert.equal(await flowsAct(conn, cli, 'flw_1', { action: 'resume' }), 0);
  assert.equal(await flowsAct(conn, cli, 'flw_1', { action: 'wait', until: '2026-05-01T07:30:00+02:00' }), 0);
  assert.equal(await flowsAct(conn, cli, 'flw_1', { action: 'wait', until: '1780007200' }), 0);
  assert.equal(await flowsAct(conn, cli, 'flw_1', { action: 'cancel' }), 0);
  assert.equal(await flowsAct(conn, cli, 'flw_1', { action: 'resume' }), 0);
  assert.deepEqual(
    seen.map((s) => [s.method, s.url, s.body]),
    [
      ['POST', '/api/taskflows/flw_1/resume', { decision: 'retry' }],
      ['POST', '/api/taskflows/flw_1/resume', {}],
      ['POST', '/api/taskflows/flw_1/wait', { until: '2026-05-01T07:30:00+02:00' }],
      ['POST', '/api/taskflows/flw_1/wait', { until: 1780007200 }],
      ['POST', '/api/taskflows/flw_1/cancel', {}],
      ['POST', '/api/taskflows/flw_1/resume', {}],
    ],
  );
  assert.equal(
    text.out,
    [
      "flw_1 'Water the plants' is running at step 2",
      "flw_1 'Water the plants' is running at step 3",
      `flw_1 'Water the plants' is waiting until ${clock(T0 + 7200)}`,
      "flw_1 'Water the plants' is waiting at step 1",
      "flw_1 'Water the plants' is cancelled",
      "flw_1 'Water the plants' is completed",
      '',
    ].join('\n'),
  );
});

void test('svc flows: 404 and 409 print the brain message on one line and exit 1', async (t) => {
  for (const [status, code, message] of [
    [404, 'NOT_FOUND', 'taskflow "nope" not found'],
    [409, 'CONFLICT', 'flow flw_1 is completed: it cannot be cancelled'],
  ] as const) {
    const { conn } = await fakeBrain(t, () => [status, { error: { code, message, details: null } }]);
    const { io: cli, text } = io();
    assert.equal(await flowsAct(conn, cli, 'nope', { action: 'cancel' }), 1);
    assert.equal(await flowsShow(conn, cli, { id: 'nope', json: false }), 1);
    assert.equal(text.err, `svc: ${message}\nsvc: ${message}\n`);
    assert.equal(text.out, '');
  }
});
