// daemon/taskflows/taskflow-tools.ts through the assembled brain with the real engine: start_taskflow
// starts a flow in the chat's session and says so in one line; a flow the engine refuses is a
// ToolFailure carrying the engine's message with the step (nothing stored); arguments that do not fit
// the step schema are caught by the registry before the tool runs; list_taskflows shows this chat's
// flows unless asked for all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ToolFailure, type Tool, type ToolContext } from '../../../daemon/kernel/tool';
import type { Taskflow, TaskflowList } from '../../../protocol/taskflows';
import { inProcessBrain } from '../../helpers/assembled-brain';

const ctx = (sessionId: string): ToolContext => ({ sessionId, turnId: 'turn-1', specialist: 'general', signal: new AbortController().signal });

async function rig(t: { after(fn: () => unknown): void }) {
  const { brain, token } = await inProcessBrain(t);
  const tool = (name: string): Tool => brain.tools.get(name) ?? assert.fail(`no tool ${name}`);
  const api = async <T>(url: string): Promise<T> => {
    const r = await brain.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.statusCode, 200, r.body);
    return r.json<T>();
  };
  return { brain, tool, api };
}

// A flow that stays put: it waits an hour at its first step.
const waitingSteps = [
  { type: 'wait', seconds: 3600 },
  { type: 'note', text: 'the hour is over' },
];

void test('start_taskflow starts a flow in the chat session and answers with its id, title and step count', async (t) => {
  const { tool, api, brain } = await rig(t);
  const start = tool('start_taskflow');
  assert.equal(start.safety, 'active');
  assert.equal(brain.tools.ownerOf('start_taskflow'), brain.tools.ownerOf('list_taskflows'));
  const outcome = await start.run({ title: 'Remind me', steps: waitingSteps }, ctx('chat-1'));
  const data = outcome.data as { id: string; status: string };
  assert.equal(outcome.summary, `started flow ${data.id} 'Remind me' (2 steps)`);
  assert.deepEqual(Object.keys(data).sort(), ['id', 'status']);
  assert.ok(['queued', 'running', 'waiting'].includes(data.status), data.status);
  assert.deepEqual(outcome.ui && { id: outcome.ui.id, template: outcome.ui.template, title: outcome.ui.title }, { id: `taskflow-${data.id}`, template: 'card', title: 'Remind me' });
  const flow = await api<Taskflow>(`/api/taskflows/${data.id}`);
  assert.equal(flow.session_id, 'chat-1', 'the flow belongs to the chat that started it');
  assert.deepEqual(flow.steps.map((s) => s.input), waitingSteps);
  const one = await start.run({ title: 'Once', steps: [{ type: 'wait', seconds: 60 }] }, ctx('chat-1'));
  assert.match(one.summary, /^started flow \S+ 'Once' \(1 step\)$/);
});

void test('a flow the engine refuses is a ToolFailure with its message and step; nothing is stored', async (t) => {
  const { tool, api } = await rig(t);
  const start = tool('start_taskflow');
  const refused: [unknown[], RegExp][] = [
    [[{ type: 'note', text: 'ok' }, { type: 'wait', seconds: 5, until: '2030-01-01T00:00:00Z' }], /step 1/],
    [[{ type: 'tool', tool: 'no_such_tool' }], /no_such_tool/],
  ];
  for (const [steps, message] of refused) {
    await assert.rejects(start.run({ title: 'Bad', steps }, ctx('chat-1')), (err: unknown) => {
      assert.ok(err instanceof ToolFailure, String(err));
      assert.match(err.message, message);
      assert.match(err.message, /step \d/, 'the model learns which step to fix');
      return true;
    });
  }
  assert.equal((await api<TaskflowList>('/api/taskflows')).count, 0);
});

void test('arguments outside the step schema are caught by the registry before the tool runs', async (t) => {
  const { brain } = await rig(t);
  const problems = (args: unknown) => brain.tools.problems('start_taskflow', args);
  assert.deepEqual(problems({ title: 'Fine', steps: waitingSteps }), []);
  assert.notDeepEqual(problems({ title: 'No steps', steps: [] }), []);
  assert.match(problems({ title: 'Bad step', steps: [{ type: 'note', text: 'ok' }, { type: 'tool' }] }).join('; '), /^\/steps\/1: /, 'the model learns which step');
  assert.notDeepEqual(problems({ title: 'Other session', steps: waitingSteps, session_id: 'elsewhere' }), [], 'the flow session is the chat, never a model argument');
  assert.notDeepEqual(problems({ steps: waitingSteps }), []);
});

void test('list_taskflows: this chat flows by default, every chat with all_sessions, by status, newest first', async (t) => {
  const { tool } = await rig(t);
  const list = tool('list_taskflows');
  assert.equal(list.safety, 'passive');
  assert.equal((await list.run({}, ctx('chat-1'))).summary, 'no flows in this chat');
  const start = tool('start_taskflow');
  const ids: string[] = [];
  for (const [title, session] of [['First', 'chat-1'], ['Second', 'chat-1'], ['Elsewhere', 'chat-2']] as const) {
    ids.push(((await start.run({ title, steps: waitingSteps }, ctx(session))).data as { id: string }).id);
  }
  const mine = await list.run({}, ctx('chat-1'));
  assert.match(mine.summary, /^2 flows in this chat: /);
  assert.deepEqual((mine.data as { taskflows: { id: string }[] }).taskflows.map((f) => f.id), [ids[1], ids[0]]);
  assert.deepEqual(mine.sources, [`taskflow:${ids[1]}`, `taskflow:${ids[0]}`]);
  const all = await list.run({ all_sessions: true, limit: 1 }, ctx('chat-1'));
  assert.match(all.summary, /^3 flows, 1 shown: /);
  assert.equal((all.data as { count: number }).count, 3);
  assert.equal((await list.run({ status: 'completed' }, ctx('chat-1'))).summary, 'no completed flows in this chat');
});
