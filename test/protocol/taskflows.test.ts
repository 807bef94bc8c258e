// The TaskFlow wire shapes (protocol/taskflows.ts): what a client may send is what the docs say, and
// what the brain answers carries the timeline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { CreateTaskflow, FLOW_STATUSES, STEP_STATUSES, StepSpec, Taskflow, TaskflowListQuery, TASKFLOW_LIST_LIMIT } from '../../protocol/taskflows';

void test('every step type of docs/taskflows.md is a StepSpec; unknown types and extra fields are not', () => {
  for (const step of [
    { type: 'tool', tool: 'status' },
    { type: 'tool', tool: 'read_file', args: { path: '{{context.file}}' } },
    { type: 'prompt', text: 'hi', tools: true },
    { type: 'wait', seconds: 5 },
    { type: 'wait', until: '2026-11-25T07:00:00+01:00' },
    { type: 'wait', event: { type: 'memory_changed', match: { tier: 'note' } }, timeout_seconds: 60 },
    { type: 'note', text: 'x' },
    { type: 'branch', if: { ref: '{{steps.0.result.temp}}', op: 'lt', value: 18 }, goto: 3 },
  ]) assert.ok(Value.Check(StepSpec, step), JSON.stringify(step));
  for (const bad of [{ type: 'shell', cmd: 'ls' }, { type: 'tool', tool: 'status', extra: 1 }, { type: 'prompt', text: '' }, { type: 'branch', if: { ref: '{{x}}', op: 'like' }, goto: 1 }]) {
    assert.ok(!Value.Check(StepSpec, bad), JSON.stringify(bad));
  }
});

void test('a flow needs a title and 1 to 1000 steps; the list limit is 1 to 500', () => {
  assert.ok(Value.Check(CreateTaskflow, { title: 't', steps: [{ type: 'note', text: 'x' }] }));
  assert.ok(!Value.Check(CreateTaskflow, { title: 't', steps: [] }));
  assert.ok(!Value.Check(CreateTaskflow, { title: ' ', steps: [{ type: 'note', text: 'x' }] }));
  assert.ok(!Value.Check(CreateTaskflow, { title: 't', steps: Array.from({ length: 1001 }, () => ({ type: 'note', text: 'x' })) }));
  assert.deepEqual(TASKFLOW_LIST_LIMIT, { min: 1, max: 500, default: 100 });
  assert.ok(Value.Check(TaskflowListQuery, { limit: 500 }) && !Value.Check(TaskflowListQuery, { limit: 501 }) && !Value.Check(TaskflowListQuery, { limit: 0 }));
});

void test('a flow as shown carries its history and its steps with theirs', () => {
  const at = 1_795_560_000;
  const flow = {
    id: 'flw_1', title: 't', session_id: 'dashboard', status: 'completed', current_step: 1, context: {}, error: null, wait_until: null,
    created_at: at, updated_at: at, started_at: at, completed_at: at, schedule: null, parent_id: null,
    history: [{ from: null, to: 'queued', at, reason: 'created' }, { from: 'queued', to: 'running', at, reason: 'started' }, { from: 'running', to: 'completed', at, reason: 'done' }],
    steps: [{ id: 'flw_1:0', index: 0, type: 'note', input: { type: 'note', text: 'x' }, status: 'succeeded', result: { id: 'n1' }, error: null, started_at: at, finished_at: at, approval_request_id: null, history: [{ from: 'pending', to: 'running', at, reason: 'started' }, { from: 'running', to: 'succeeded', at, reason: 'noted' }] }],
  };
  assert.ok(Value.Check(Taskflow, flow), JSON.stringify([...Value.Errors(Taskflow, flow)][0]));
  assert.deepEqual([...FLOW_STATUSES], ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled']);
  assert.deepEqual([...STEP_STATUSES], ['pending', 'running', 'waiting', 'succeeded', 'failed', 'skipped', 'unknown']);
});
