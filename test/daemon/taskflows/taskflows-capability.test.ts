// daemon/taskflows/taskflows-capability.ts in an in-process brain with the real capabilities: its
// settings section (defaults and bounds), a flow created through the API that runs and whose
// taskflow_update frames reach the clients of its session, and a privileged tool step that the
// approvals capability holds, which runs once approved through POST /api/approvals/{id}/approve and
// lets the flow go on — without an agent continuation turn in the session (its turn id is taskflow:…).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CAPABILITIES } from '../../../daemon/capabilities';
import { parseSettings, settingsFormat, SettingsError } from '../../../daemon/config/load-settings';
import type { BrainMessage } from '../../../protocol/session';
import type { Taskflow } from '../../../protocol/taskflows';
import { taskflowsCapability } from '../../../daemon/taskflows/taskflows-capability';
import { inProcessBrain } from '../../helpers/assembled-brain';
import { RecordingClient } from '../agent/agent-fixtures';

const format = settingsFormat(CAPABILITIES);

void test('settings: taskflows.max_running defaults to 4 (1 to 64), retention_days to 30 (1 to 3650); anything else is refused with its path', () => {
  assert.ok(CAPABILITIES.includes(taskflowsCapability));
  const defaults = parseSettings({}, 'settings.json', format) as unknown as { taskflows: Record<string, unknown> };
  assert.deepEqual(defaults.taskflows, { max_running: 4, retention_days: 30 });
  const edges = parseSettings({ taskflows: { max_running: 64, retention_days: 1 } }, 'settings.json', format) as unknown as { taskflows: Record<string, unknown> };
  assert.deepEqual(edges.taskflows, { max_running: 64, retention_days: 1 });
  const bad: [Record<string, unknown>, string][] = [
    [{ max_running: 0 }, '/taskflows/max_running'],
    [{ max_running: 65 }, '/taskflows/max_running'],
    [{ max_running: 2.5 }, '/taskflows/max_running'],
    [{ max_running: '4' }, '/taskflows/max_running'],
    [{ retention_days: 0 }, '/taskflows/retention_days'],
    [{ retention_days: 3651 }, '/taskflows/retention_days'],
    [{ keep_forever: true }, '/taskflows'],
  ];
  for (const [section, path] of bad) {
    assert.throws(
      () => parseSettings({ taskflows: section }, 'settings.json', format),
      (err: unknown) => {
        assert.ok(err instanceof SettingsError, String(err));
        assert.ok(err.message.includes(path), `${JSON.stringify(section)}: ${err.message}`);
        return true;
      },
    );
  }
});

interface Started {
  api(method: 'GET' | 'POST', url: string, payload?: unknown): Promise<{ statusCode: number; json(): unknown; body: string }>;
  client: RecordingClient;
  sessionId: string;
  brain: Awaited<ReturnType<typeof inProcessBrain>>['brain'];
}

async function started(t: { after(fn: () => unknown): void }): Promise<Started> {
  const { brain, token } = await inProcessBrain(t);
  const session = brain.agent.sessions.open();
  const client = new RecordingClient('flows');
  brain.agent.sessions.attach(session, client);
  return {
    brain,
    client,
    sessionId: session.id,
    api: (method, url, payload) => brain.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) }),
  };
}

const update = (flowId: string, status: string) => (m: BrainMessage): boolean => m.type === 'taskflow_update' && m.payload.flow_id === flowId && m.payload.status === status;

void test('the capability mounts /api/taskflows and the agent\'s tools; a flow created through the API runs and its updates reach its session\'s clients', { timeout: 30_000 }, async (t) => {
  const s = await started(t);
  assert.ok(s.brain.tools.get('start_taskflow'));
  assert.ok(s.brain.tools.get('list_taskflows'));
  const created = await s.api('POST', '/api/taskflows', { title: 'Pause then note', session_id: s.sessionId, context: { what: 'tea' }, steps: [{ type: 'wait', seconds: 0 }, { type: 'note', text: 'Time for {{context.what}}' }] });
  assert.equal(created.statusCode, 201, created.body);
  const flow = created.json() as Taskflow;
  assert.equal(flow.session_id, s.sessionId);
  const done = await s.client.until(update(flow.id, 'completed'));
  assert.equal(done.session_id, s.sessionId);
  const statuses = s.client.frames.filter((m) => m.type === 'taskflow_update' && m.payload.flow_id === flow.id).map((m) => (m.type === 'taskflow_update' ? m.payload.status : ''));
  assert.equal(statuses[0], 'queued', 'announced as created');
  assert.ok(statuses.includes('waiting') && statuses.includes('running'), statuses.join(','));
  const shown = (await s.api('GET', `/api/taskflows/${flow.id}`)).json() as Taskflow;
  assert.equal(shown.status, 'completed');
  assert.deepEqual(
    shown.steps.map((step) => step.status),
    ['succeeded', 'succeeded'],
  );
  assert.match(String((shown.steps[1]!.result as { id: string }).id), /\S/, 'the note was stored in memory');

  // Another session's flow is not shown to this client.
  const other = await s.api('POST', '/api/taskflows', { title: 'Elsewhere', steps: [{ type: 'wait', seconds: 0 }] });
  const otherFlow = other.json() as Taskflow;
  assert.equal(otherFlow.session_id, 'dashboard');
  const list = (await s.api('GET', `/api/taskflows?session_id=${s.sessionId}`)).json() as { count: number };
  assert.equal(list.count, 1);
  assert.equal(
    s.client.frames.some((m) => m.type === 'taskflow_update' && m.payload.flow_id === otherFlow.id),
    false,
  );
});

void test('a privileged tool step is held by the approvals capability, waits, and runs once approved through the API; the flow goes on with no continuation turn', { timeout: 30_000 }, async (t) => {
  const s = await started(t);
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-flow-files-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const target = join(dir, 'old.txt');
  writeFileSync(target, 'stale');
  const granted = await s.api('POST', '/api/grants', { path: dir, write: true });
  assert.equal(granted.statusCode, 201, granted.body);

  const created = await s.api('POST', '/api/taskflows', { title: 'Tidy up', session_id: s.sessionId, steps: [{ type: 'tool', tool: 'delete_file', args: { path: target } }, { type: 'wait', seconds: 0 }] });
  assert.equal(created.statusCode, 201, created.body);
  const flow = created.json() as Taskflow;
  const requested = await s.client.until((m) => m.type === 'approval_requested');
  assert.ok(requested.type === 'approval_requested');
  assert.match(requested.payload.turn_id, new RegExp(`^taskflow:${flow.id}:0$`), 'the held call names its flow and step');
  await s.client.until(update(flow.id, 'waiting'));
  const waiting = (await s.api('GET', `/api/taskflows/${flow.id}`)).json() as Taskflow;
  const requestId = waiting.steps[0]!.approval_request_id;
  assert.equal(requestId, requested.payload.request_id);
  assert.ok(existsSync(target), 'held: not run');
  const resume = await s.api('POST', `/api/taskflows/${flow.id}/resume`, {});
  assert.equal(resume.statusCode, 409, 'a held step is continued by its approval, not by resume');

  const approved = await s.api('POST', `/api/approvals/${requestId}/approve`, {});
  assert.equal(approved.statusCode, 200, approved.body);
  await s.client.until(update(flow.id, 'completed'));
  assert.equal(existsSync(target), false, 'the approved call ran once');
  const done = (await s.api('GET', `/api/taskflows/${flow.id}`)).json() as Taskflow;
  assert.deepEqual(
    done.steps.map((step) => step.status),
    ['succeeded', 'succeeded'],
  );
  assert.match(done.steps[0]!.history.at(-1)!.reason, /^approved; delete_file: /);
  // The agent did not start a turn to continue the call: it was not the agent's call.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    s.client.frames.filter((m) => m.type === 'turn_started'),
    [],
  );
  assert.ok(s.client.frames.some((m) => m.type === 'approval_resolved' && m.payload.request_id === requestId));
});
