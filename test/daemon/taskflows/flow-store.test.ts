// daemon/taskflows/flow-store.ts on a real SQLite file: every change is one transaction guarded by the
// state machine — a refused change (TransitionError) leaves rows and timeline exactly as they were
// (also as a property over random changes); `expect` refuses a change made on a stale view; a
// scheduled flow's run and the parent's next occurrence land together or not at all; prune removes
// finished flows with their steps and timeline; list, ids, byApproval, eventWaiters, due and
// nextDeadline and interrupted select what they say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import type { Db, Store } from '../../../daemon/store/store';
import { FlowStore, TASKFLOW_MIGRATIONS, type Change } from '../../../daemon/taskflows/flow-store';
import { canFlow, canStep, TransitionError } from '../../../daemon/taskflows/flow-machine';
import { FLOW_STATUSES, STEP_STATUSES, type CreateTaskflow, type FlowStatus, type StepStatus } from '../../../protocol/taskflows';

interface Rig {
  flows: FlowStore;
  sqlite: SqliteStore;
  clock: { ms: number };
  /** When set, the next write statement whose SQL starts with it throws (a failure inside the transaction). */
  failOn: { sql: string | null };
  dump(): unknown;
}

function rig(t: { after(fn: () => unknown): void }): Rig {
  const dir = mkdtempSync(join(tmpdir(), 'svc-flow-store-'));
  const sqlite = new SqliteStore(join(dir, 'brain.db'));
  sqlite.migrate('taskflows', TASKFLOW_MIGRATIONS);
  const clock = { ms: Date.UTC(2026, 10, 25, 7) };
  const failOn: Rig['failOn'] = { sql: null };
  const failing = (db: Db): Db => ({
    run: (sql, params) => {
      if (failOn.sql !== null && sql.startsWith(failOn.sql)) throw new Error(`injected failure at ${failOn.sql}`);
      return db.run(sql, params);
    },
    get: (sql, params) => db.get(sql, params),
    all: (sql, params) => db.all(sql, params),
  });
  const store: Store = {
    path: sqlite.path,
    run: (sql, params) => sqlite.run(sql, params),
    get: (sql, params) => sqlite.get(sql, params),
    all: (sql, params) => sqlite.all(sql, params),
    migrate: (c, m) => sqlite.migrate(c, m),
    close: () => sqlite.close(),
    write: (fn) => sqlite.write((db) => fn(failing(db))),
  };
  t.after(() => {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    flows: new FlowStore(store, { now: () => clock.ms }),
    sqlite,
    clock,
    failOn,
    dump: () => ({
      flows: sqlite.all('SELECT * FROM taskflows ORDER BY rowid'),
      steps: sqlite.all('SELECT * FROM taskflow_steps ORDER BY flow_id, idx'),
      transitions: sqlite.all('SELECT rowid, * FROM taskflow_transitions ORDER BY rowid'),
    }),
  };
}

const input = (steps = 3, extra: Partial<CreateTaskflow> = {}): CreateTaskflow & { session_id: string } => ({
  title: 'store test',
  session_id: 'ses_a',
  context: { room: 'hall' },
  steps: Array.from({ length: steps }, (_, i) => ({ type: 'note' as const, text: `note ${i}` })),
  ...extra,
});
const queued = (r: Rig, extra: Partial<CreateTaskflow> = {}, steps = 3): Promise<string> => r.flows.insert(input(steps, extra), { status: 'queued', waitUntil: null, reason: 'created' });

const refusedWith = async (p: Promise<unknown>, kind: 'flow' | 'step', from: string, to: string): Promise<void> => {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof TransitionError, String(err));
    assert.deepEqual([err.kind, err.from, err.to], [kind, from, to]);
    return true;
  });
};

void test('insert: the flow, its pending steps and the first line of its timeline, in one transaction', async (t) => {
  const r = rig(t);
  const id = await queued(r);
  assert.match(id, /^flw_[\w-]{16}$/);
  const f = r.flows.get(id)!;
  assert.equal(f.status, 'queued');
  assert.deepEqual(f.context, { room: 'hall' });
  assert.equal(f.created_at, r.clock.ms / 1000);
  assert.deepEqual(f.history, [{ from: null, to: 'queued', at: r.clock.ms / 1000, reason: 'created' }]);
  assert.deepEqual(
    f.steps.map((s) => [s.id, s.index, s.status, s.history.length]),
    [
      [`${id}:0`, 0, 'pending', 0],
      [`${id}:1`, 1, 'pending', 0],
      [`${id}:2`, 2, 'pending', 0],
    ],
  );
  assert.deepEqual(f.steps[1]!.input, { type: 'note', text: 'note 1' });
  r.failOn.sql = 'INSERT INTO taskflow_transitions';
  await assert.rejects(queued(r), /injected failure/);
  r.failOn.sql = null;
  assert.equal(r.flows.list({ limit: 10 }).count, 1, 'a failed insert leaves no flow');
  assert.equal(r.sqlite.get<{ n: number }>('SELECT COUNT(*) AS n FROM taskflow_steps')!.n, 3, 'and no steps');
});

void test('apply: a refused transition throws TransitionError and changes nothing, not even the parts that were allowed', async (t) => {
  const r = rig(t);
  const id = await queued(r);
  await r.flows.apply(id, { flow: { to: 'running', reason: 'started', set: { current_step: 0 } }, steps: [{ index: 0, to: 'running', reason: 'started' }] });
  const before = r.dump();
  r.clock.ms += 1000;
  // An allowed step change next to a refused one; allowed step changes with a refused flow change; a missing step or flow.
  await refusedWith(r.flows.apply(id, { steps: [{ index: 0, to: 'succeeded', reason: 'ok', set: { result: { a: 1 } } }, { index: 1, to: 'unknown', reason: 'no' }] }), 'step', 'pending', 'unknown');
  await refusedWith(r.flows.apply(id, { steps: [{ index: 0, to: 'succeeded', reason: 'ok' }], flow: { to: 'running', reason: 'same' } }).then(() => r.flows.apply(id, { steps: [{ index: 1, to: 'running', reason: 'ok' }], flow: { to: 'queued', reason: 'no', set: { error: 'changed', current_step: 2 } }, expect: ['queued'] })), 'flow', 'running', 'queued');
  const afterOne = r.dump();
  assert.notDeepEqual(afterOne, before, 'the allowed change landed');
  await refusedWith(r.flows.apply(id, { steps: [{ index: 7, to: 'running', reason: 'no' }] }), 'step', 'missing', 'running');
  await refusedWith(r.flows.apply('flw_nothing', { flow: { to: 'running', reason: 'no' } }), 'flow', 'missing', 'running');
  const q = await queued(r);
  const withQueued = r.dump();
  await refusedWith(r.flows.apply(q, { steps: [{ index: 0, to: 'running', reason: 'ok' }], flow: { to: 'completed', reason: 'no', set: { error: 'changed' } } }), 'flow', 'queued', 'completed');
  assert.deepEqual(r.dump(), withQueued, 'refused changes left every row and the timeline as they were');
  await refusedWith(r.flows.apply(id, { steps: [{ index: 1, to: 'succeeded', reason: 'ok' }, { index: 2, to: 'skipped', reason: 'ok' }, { index: 0, to: 'failed', reason: 'no' }] }), 'step', 'succeeded', 'failed');
  assert.deepEqual(r.dump(), withQueued);

  const g = await queued(r);
  await r.flows.apply(g, { flow: { to: 'cancelled', reason: 'cancelled' } });
  const cancelled = r.dump();
  for (const to of FLOW_STATUSES.filter((s) => s !== 'cancelled')) await refusedWith(r.flows.apply(g, { flow: { to, reason: 'no' } }), 'flow', 'cancelled', to);
  assert.deepEqual(r.dump(), cancelled, 'a cancelled flow is never overwritten');
});

void test('apply: the same status, or none, changes fields only without a line in the timeline; times follow the statuses', async (t) => {
  const r = rig(t);
  const id = await queued(r);
  const t0 = r.clock.ms / 1000;
  r.clock.ms += 1000;
  await r.flows.apply(id, { flow: { to: 'running', reason: 'started', set: { current_step: 0 } }, steps: [{ index: 0, to: 'running', reason: 'started' }] });
  r.clock.ms += 1000;
  await r.flows.apply(id, { flow: { to: 'running', reason: 'still', set: { current_step: 1 } }, steps: [{ index: 0, to: 'running', reason: 'still', set: { result: { partial: true } } }] });
  await r.flows.apply(id, { flow: { reason: 'fields', set: { error: 'noted' } } });
  let f = r.flows.get(id)!;
  assert.deepEqual(
    f.history.map((h) => h.to),
    ['queued', 'running'],
  );
  assert.deepEqual(
    f.steps[0]!.history.map((h) => h.to),
    ['running'],
  );
  assert.equal(f.current_step, 1);
  assert.equal(f.error, 'noted');
  assert.deepEqual(f.steps[0]!.result, { partial: true });
  assert.equal(f.started_at, t0 + 1, 'started when it first ran');
  assert.equal(f.steps[0]!.started_at, t0 + 1, 'a running step that stays running keeps its start');
  assert.equal(f.updated_at, t0 + 2);
  r.clock.ms += 1000;
  await r.flows.apply(id, { steps: [{ index: 0, to: 'succeeded', reason: 'done', set: { result: { n: 1 } } }], flow: { to: 'completed', reason: 'done' } });
  f = r.flows.get(id)!;
  assert.equal(f.completed_at, t0 + 3);
  assert.equal(f.steps[0]!.finished_at, t0 + 3);
  assert.deepEqual(f.steps[0]!.result, { n: 1 });

  // A loop sets a step back to pending: its run fields are cleared.
  const g = await queued(r);
  await r.flows.apply(g, { flow: { to: 'running', reason: 'started' }, steps: [{ index: 0, to: 'running', reason: 's' }] });
  await r.flows.apply(g, { steps: [{ index: 0, to: 'waiting', reason: 'held', set: { approval_request_id: 'apr_1', wait_until: 5 } }], flow: { to: 'waiting', reason: 'held' } });
  await r.flows.apply(g, { steps: [{ index: 0, to: 'failed', reason: 'rejected', set: { error: 'rejected' } }], flow: { to: 'failed', reason: 'rejected' } });
  assert.notEqual(r.flows.get(g)!.completed_at, null);
  await r.flows.apply(g, { steps: [{ index: 0, to: 'pending', reason: 'retry' }], flow: { to: 'queued', reason: 'resumed' } });
  const again = r.flows.get(g)!;
  assert.equal(again.completed_at, null, 'back to queued: not finished any more');
  assert.deepEqual([again.steps[0]!.status, again.steps[0]!.error, again.steps[0]!.result, again.steps[0]!.approval_request_id, again.steps[0]!.started_at, again.steps[0]!.finished_at], ['pending', null, null, null, null, null]);
  assert.equal(r.flows.step(g, 0)!.wait_until, null);
});

void test('apply with expect: refused unless the flow is in one of the expected states now (a change made on a stale view)', async (t) => {
  const r = rig(t);
  const id = await queued(r);
  await r.flows.apply(id, { flow: { to: 'waiting', reason: 'paused' } });
  const before = r.dump();
  await refusedWith(r.flows.apply(id, { flow: { to: 'cancelled', reason: 'cancel' }, expect: ['queued', 'running'] }), 'flow', 'waiting', 'cancelled');
  await refusedWith(r.flows.apply(id, { flow: { reason: 'fields', set: { error: 'x' } }, expect: ['running'] }), 'flow', 'waiting', 'changed');
  assert.deepEqual(r.dump(), before);
  await r.flows.apply(id, { flow: { to: 'cancelled', reason: 'cancel' }, expect: ['waiting'] });
  assert.equal(r.flows.flow(id)!.status, 'cancelled');
});

void test('property: random changes either apply whole (statuses set, one timeline line per real change) or are refused and change nothing', async (t) => {
  const r = rig(t);
  const id = await queued(r, {}, 3);
  const change = fc.record(
    {
      flow: fc.record({ to: fc.option(fc.constantFrom(...FLOW_STATUSES), { nil: undefined }), reason: fc.constant('random') }, { requiredKeys: ['reason'] }),
      steps: fc.uniqueArray(fc.record({ index: fc.nat(3), to: fc.constantFrom(...STEP_STATUSES), reason: fc.constant('random') }), { maxLength: 3, selector: (s) => s.index }),
      expect: fc.subarray([...FLOW_STATUSES]),
    },
    { requiredKeys: [] },
  );
  await fc.assert(
    fc.asyncProperty(fc.array(change, { maxLength: 12 }), async (changes) => {
      for (const c of changes as Change[]) {
        const before = r.dump() as { transitions: unknown[] };
        const flowNow = r.flows.flow(id)!.status;
        const stepsNow = r.flows.steps(id).map((s) => s.status);
        const allowed =
          (!c.expect || c.expect.includes(flowNow)) &&
          (c.steps ?? []).every((s) => s.index < stepsNow.length && (stepsNow[s.index] === s.to || canStep(stepsNow[s.index]!, s.to))) &&
          (c.flow?.to === undefined || c.flow.to === flowNow || canFlow(flowNow, c.flow.to));
        const outcome = await r.flows.apply(id, c).then(
          () => 'applied',
          (err: unknown) => {
            if (err instanceof TransitionError) return 'refused';
            throw err;
          },
        );
        assert.equal(outcome, allowed ? 'applied' : 'refused', JSON.stringify({ c, flowNow, stepsNow }));
        const after = r.dump() as { transitions: unknown[] };
        if (outcome === 'refused') {
          assert.deepEqual(after, before);
          continue;
        }
        assert.equal(r.flows.flow(id)!.status, c.flow?.to ?? flowNow);
        for (const s of c.steps ?? []) assert.equal(r.flows.step(id, s.index)!.status, s.to);
        const real = (c.steps ?? []).filter((s) => stepsNow[s.index] !== s.to).length + (c.flow?.to !== undefined && c.flow.to !== flowNow ? 1 : 0);
        assert.equal(after.transitions.length - before.transitions.length, real, 'one line per real change');
      }
      const f = r.flows.get(id)!;
      for (let i = 1; i < f.history.length; i++) assert.equal(f.history[i]!.from, f.history[i - 1]!.to);
      for (const s of f.steps) for (let i = 1; i < s.history.length; i++) assert.equal(s.history[i]!.from, s.history[i - 1]!.to);
    }),
    { numRuns: 60 },
  );
});

void test('spawnRun: the run and the parent\'s next occurrence land in one transaction; a parent not waiting spawns nothing; no next occurrence completes the parent', async (t) => {
  const r = rig(t);
  const parent = await r.flows.insert(input(2, { schedule: '0 7 * * *', timezone: 'Europe/Berlin' }), { status: 'waiting', waitUntil: 100, reason: 'scheduled' });
  r.clock.ms += 5000;
  const run = await r.flows.spawnRun(parent, 200, 'scheduled occurrence; next at 200');
  assert.ok(run);
  const child = r.flows.get(run)!;
  assert.deepEqual([child.status, child.parent_id, child.title, child.session_id, child.schedule], ['queued', parent, 'store test', 'ses_a', null]);
  assert.deepEqual(child.context, { room: 'hall' });
  assert.deepEqual(
    child.steps.map((s) => [s.status, s.input]),
    [
      ['pending', { type: 'note', text: 'note 0' }],
      ['pending', { type: 'note', text: 'note 1' }],
    ],
  );
  assert.deepEqual(child.history.map((h) => h.reason), [`run 1 of scheduled flow ${parent}`]);
  const p = r.flows.flow(parent)!;
  assert.deepEqual([p.status, p.wait_until, p.runs], ['waiting', 200, 1]);

  // A failure inside the transaction (the parent's update) takes the new run with it.
  const before = r.dump();
  r.failOn.sql = 'UPDATE taskflows';
  await assert.rejects(r.flows.spawnRun(parent, 300, 'next'), /injected failure/);
  r.failOn.sql = null;
  assert.deepEqual(r.dump(), before, 'neither the run nor the next occurrence');

  const second = await r.flows.spawnRun(parent, null, 'the last one');
  assert.ok(second);
  const done = r.flows.get(parent)!;
  assert.deepEqual([done.status, done.wait_until, done.history.at(-1)!.reason], ['completed', null, 'the schedule has no further occurrence']);
  assert.equal(r.flows.flow(second)!.parent_id, parent);
  assert.equal(await r.flows.spawnRun(parent, 400, 'again'), null, 'a completed parent spawns nothing');
  assert.equal(await r.flows.spawnRun('flw_missing', 400, 'none'), null);
  assert.equal(r.flows.list({ limit: 10 }).count, 3);
});

void test('prune: finished flows last changed before the cut go with their steps and timeline; live and recent ones stay', async (t) => {
  const r = rig(t);
  const old = await queued(r);
  const oldFailed = await queued(r);
  const oldWaiting = await queued(r);
  await r.flows.apply(old, { flow: { to: 'cancelled', reason: 'x' } });
  await r.flows.apply(oldFailed, { flow: { to: 'running', reason: 'x' } });
  await r.flows.apply(oldFailed, { flow: { to: 'failed', reason: 'x' } });
  await r.flows.apply(oldWaiting, { flow: { to: 'waiting', reason: 'x' } });
  const cut = r.clock.ms / 1000 + 1;
  r.clock.ms += 10_000;
  const recent = await queued(r);
  await r.flows.apply(recent, { flow: { to: 'cancelled', reason: 'x' } });
  assert.equal(await r.flows.prune(cut), 2);
  assert.deepEqual(
    r.flows
      .list({ limit: 10 })
      .taskflows.map((f) => f.id)
      .sort(),
    [oldWaiting, recent].sort(),
  );
  for (const table of ['taskflow_steps', 'taskflow_transitions']) {
    assert.equal(r.sqlite.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE flow_id IN (?, ?)`, [old, oldFailed])!.n, 0, table);
  }
  // Nothing due: no write transaction at all (the engine prunes at every start; a commit costs fsyncs).
  r.failOn.sql = 'DELETE';
  assert.equal(await r.flows.prune(cut), 0);
  const writes = { n: 0 };
  const counting = new FlowStore({ get: (sql, params) => r.sqlite.get(sql, params), all: (sql, params) => r.sqlite.all(sql, params), run: (sql, params) => r.sqlite.run(sql, params), migrate: () => undefined, close: () => undefined, path: r.sqlite.path, write: (fn) => (writes.n++, r.sqlite.write(fn)) }, { now: () => r.clock.ms });
  assert.equal(await counting.prune(cut), 0);
  assert.equal(writes.n, 0);
});

void test('list filters by status and session, counts all matches whatever the limit, newest first; ids are oldest first', async (t) => {
  const r = rig(t);
  const made: string[] = [];
  for (let i = 0; i < 6; i++) {
    made.push(await queued(r, { session_id: i % 2 === 0 ? 'ses_even' : 'ses_odd' }));
    if (i % 3 === 0) r.clock.ms += 1000; // some share a creation time: rowid keeps their order
  }
  await r.flows.apply(made[1]!, { flow: { to: 'cancelled', reason: 'x' } });
  const all = r.flows.list({ limit: 2 });
  assert.equal(all.count, 6);
  assert.equal(all.taskflows.length, 2);
  assert.ok(all.taskflows[0]!.created_at >= all.taskflows[1]!.created_at);
  assert.ok(!('steps' in all.taskflows[0]!) && !('history' in all.taskflows[0]!), 'a summary');
  const even = r.flows.list({ sessionId: 'ses_even', limit: 100 });
  assert.deepEqual(even.taskflows.map((f) => f.id).sort(), [made[0], made[2], made[4]].sort());
  assert.equal(even.count, 3);
  assert.deepEqual(r.flows.list({ status: 'cancelled', limit: 100 }).taskflows.map((f) => f.id), [made[1]]);
  assert.deepEqual(r.flows.list({ status: 'cancelled', sessionId: 'ses_even', limit: 100 }), { count: 0, taskflows: [] });
  assert.deepEqual(r.flows.ids('queued'), [made[0], made[2], made[3], made[4], made[5]], 'oldest first, creation order within the same time');
  assert.deepEqual(r.flows.ids('queued', 2), [made[0], made[2]]);
});

void test('byApproval, eventWaiters, due and nextDeadline select only what waits for them', async (t) => {
  const r = rig(t);
  const now = r.clock.ms / 1000;
  const steps: CreateTaskflow['steps'] = [
    { type: 'tool', tool: 'reboot' },
    { type: 'wait', event: { type: 'memory_changed' } },
  ];
  const held = await r.flows.insert(input(2, { steps }), { status: 'queued', waitUntil: null, reason: 'created' });
  await r.flows.apply(held, { flow: { to: 'running', reason: 's', set: { current_step: 0 } }, steps: [{ index: 0, to: 'running', reason: 's' }] });
  await r.flows.apply(held, { flow: { to: 'waiting', reason: 'held' }, steps: [{ index: 0, to: 'waiting', reason: 'held', set: { approval_request_id: 'apr_1' } }] });
  assert.deepEqual(r.flows.byApproval('apr_1'), { flowId: held, index: 0 });
  assert.equal(r.flows.byApproval('apr_2'), undefined);
  assert.deepEqual(r.flows.eventWaiters(), [], 'a held tool step is not an event wait');

  const evented = await r.flows.insert(input(2, { steps }), { status: 'queued', waitUntil: null, reason: 'created' });
  await r.flows.apply(evented, { flow: { to: 'running', reason: 's', set: { current_step: 1 } } });
  await r.flows.apply(evented, { flow: { to: 'waiting', reason: 'w', set: { wait_until: now + 50 } }, steps: [{ index: 1, to: 'waiting', reason: 'w', set: { wait_until: now + 50 } }] });
  assert.deepEqual(r.flows.eventWaiters(), [{ flowId: evented, index: 1, input: steps[1], wait_until: now + 50 }]);

  const paused = await queued(r);
  await r.flows.apply(paused, { flow: { to: 'waiting', reason: 'paused', set: { wait_until: now + 10 } } });
  const later = await queued(r);
  await r.flows.apply(later, { flow: { to: 'waiting', reason: 'paused', set: { wait_until: now + 100 } } });
  const cancelledWithTime = await queued(r);
  await r.flows.apply(cancelledWithTime, { flow: { to: 'cancelled', reason: 'x', set: { wait_until: now + 1 } } });
  assert.equal(r.flows.nextDeadline(), now + 10, 'a cancelled flow has no deadline');
  assert.deepEqual(r.flows.due(now + 5), []);
  assert.deepEqual(r.flows.due(now + 60), [paused, evented], 'earliest deadline first');
  assert.deepEqual(r.flows.due(now + 1000, 1), [paused]);

  // Once the approval is decided (the step is no longer waiting) the request no longer names it.
  await r.flows.apply(held, { steps: [{ index: 0, to: 'succeeded', reason: 'approved' }], flow: { to: 'queued', reason: 'approved' } });
  assert.equal(r.flows.byApproval('apr_1'), undefined);
  // A flow that is no longer waiting is no event waiter, even with its step still marked waiting.
  await r.flows.apply(evented, { flow: { to: 'cancelled', reason: 'x', set: { wait_until: null } } });
  assert.deepEqual(r.flows.eventWaiters(), []);
  await r.flows.apply(paused, { flow: { to: 'queued', reason: 'resumed', set: { wait_until: null } } });
  await r.flows.apply(later, { flow: { to: 'queued', reason: 'resumed', set: { wait_until: null } } });
  assert.equal(r.flows.nextDeadline(), null);
});

void test('interrupted: the flows of any status whose current step is running, oldest first', async (t) => {
  const r = rig(t);
  const running = await queued(r);
  const paused = await queued(r);
  const cancelled = await queued(r);
  const idle = await queued(r);
  const notCurrent = await queued(r);
  for (const id of [running, paused, cancelled, notCurrent]) await r.flows.apply(id, { flow: { to: 'running', reason: 's', set: { current_step: 0 } }, steps: [{ index: 0, to: 'running', reason: 's' }] });
  await r.flows.apply(paused, { flow: { to: 'waiting', reason: 'paused' } });
  await r.flows.apply(cancelled, { flow: { to: 'cancelled', reason: 'cancelled' } });
  await r.flows.apply(notCurrent, { flow: { reason: 'moved on', set: { current_step: 1 } } });
  await r.flows.apply(idle, { flow: { to: 'running', reason: 's', set: { current_step: 0 } } });
  assert.deepEqual(r.flows.interrupted(), [running, paused, cancelled]);
});

void test('statuses read back as written: every flow and step status survives the store', async (t) => {
  const r = rig(t);
  const id = await queued(r, {}, 1);
  const seen: (FlowStatus | StepStatus)[] = [];
  for (const [to, step] of [
    ['running', 'running'],
    ['waiting', 'waiting'],
    ['failed', 'failed'],
    ['queued', 'pending'],
  ] as const) {
    await r.flows.apply(id, { flow: { to, reason: to }, steps: [{ index: 0, to: step, reason: step }] });
    const f = r.flows.get(id)!;
    seen.push(f.status, f.steps[0]!.status);
  }
  assert.deepEqual(seen, ['running', 'running', 'waiting', 'waiting', 'failed', 'failed', 'queued', 'pending']);
});

void test('empty: true until the first flow is stored (the engine asks only this at start when so)', async (t) => {
  const r = rig(t);
  assert.equal(r.flows.empty(), true);
  await queued(r);
  assert.equal(r.flows.empty(), false);
});
