// The first-party skills on the built brain (issue 16 "Skills"; docs/skills.md "First-party skills"),
// black box: dist/builtin-skills/ is loaded at start, GET /api/skills lists the three active with
// source builtin; unit-convert runs over HTTP (a bad unit is an error kill with its message, bad params
// a 400); a builtin cannot be deleted (409) but can be disabled and enabled; the reminder makes a real
// TaskFlow under the default policy (active tools run), is held for approval once start_taskflow is
// set to ask, and the approved call makes the flow; a one-second timer runs to its note, which the
// daily briefing then finds, as it finds a note created over the API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT, startBrain, type BrainProcess } from '../helpers/brain-process';
import type { SkillDetail, SkillList, SkillListItem, SkillRunView } from '../../protocol/skills';
import type { Taskflow, TaskflowList } from '../../protocol/taskflows';
import type { ApprovalList } from '../../protocol/approvals';

type ErrorBody = { error: { code: string; message: string; details: Record<string, unknown> | null } };
const BUILTIN = ['daily-briefing', 'reminder', 'unit-convert'];

async function call<T>(brain: BrainProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const r = await brain.api(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: r.status, body: (await r.json()) as T };
}

async function execute(brain: BrainProcess, id: string, params: Record<string, unknown>): Promise<SkillRunView> {
  const r = await call<SkillRunView>(brain, 'POST', `/api/skills/${id}/execute`, { params });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** The result of a run that must have ended ok. */
function resultOf<T>(run: SkillRunView): T {
  assert.equal(run.status, 'ok', JSON.stringify(run));
  return run.result as T;
}

/** Polls `probe` every 100 ms, at most `tries` times, until `done` holds; the last value. */
async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, tries = 150): Promise<T> {
  let value = await probe();
  for (let i = 0; i < tries && !done(value); i++) {
    await sleep(100);
    value = await probe();
  }
  return value;
}

void test('the build ships the first-party skills in dist/builtin-skills/', () => {
  for (const id of BUILTIN) for (const file of ['manifest.json', 'main.js']) assert.ok(existsSync(join(ROOT, 'dist', 'builtin-skills', id, file)), `dist/builtin-skills/${id}/${file}`);
});

void test('listed active and builtin; unit-convert over HTTP; a builtin is not deleted (409) but is disabled and enabled', { timeout: 60_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());

  const list = await call<SkillList>(brain, 'GET', '/api/skills');
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.skills.filter((s) => BUILTIN.includes(s.id)).map((s) => [s.id, s.status, s.version]), BUILTIN.map((id) => [id, 'active', '1.0.0']));
  for (const id of BUILTIN) {
    const detail = await call<SkillDetail>(brain, 'GET', `/api/skills/${id}`);
    assert.equal(detail.body.source, 'builtin', id);
    assert.equal(detail.body.signed_by, null);
    assert.equal(detail.body.unsigned, false);
    assert.equal(detail.body.error, null);
    assert.equal(detail.body.tool, `skill_${id.replaceAll('-', '_')}`);
  }

  const converted = resultOf<{ result: number; text: string }>(await execute(brain, 'unit-convert', { value: 100, from: '°C', to: '°F' }));
  assert.equal(converted.result, 212);
  assert.equal(converted.text, '100 °C = 212 °F');
  const unknown = await execute(brain, 'unit-convert', { value: 1, from: 'furlong', to: 'm' });
  assert.equal(unknown.status, 'killed');
  assert.equal(unknown.kill, 'error');
  assert.match(unknown.message ?? '', /^ConversionError: unknown unit "furlong"/);
  const badParams = await call<ErrorBody>(brain, 'POST', '/api/skills/unit-convert/execute', { params: { value: 'ten', from: 'km', to: 'mi' } });
  assert.equal(badParams.status, 400, JSON.stringify(badParams.body));
  assert.equal(badParams.body.error.code, 'BAD_REQUEST');

  const removed = await call<ErrorBody>(brain, 'DELETE', '/api/skills/unit-convert');
  assert.equal(removed.status, 409, JSON.stringify(removed.body));
  assert.equal(removed.body.error.code, 'CONFLICT');
  assert.match(removed.body.error.message, /ships with svc; disable it instead/);

  const disabled = await call<SkillListItem>(brain, 'POST', '/api/skills/unit-convert/disable');
  assert.equal(disabled.status, 200);
  assert.equal(disabled.body.status, 'disabled');
  const refused = await call<ErrorBody>(brain, 'POST', '/api/skills/unit-convert/execute', { params: { value: 1, from: 'km', to: 'm' } });
  assert.equal(refused.status, 409);
  assert.equal(refused.body.error.details?.status, 'disabled');
  assert.equal((await call<SkillList>(brain, 'GET', '/api/skills')).body.skills.find((s) => s.id === 'unit-convert')?.status, 'disabled');
  const enabled = await call<SkillListItem>(brain, 'POST', '/api/skills/unit-convert/enable');
  assert.equal(enabled.body.status, 'active');
  assert.equal(resultOf<{ result: number }>(await execute(brain, 'unit-convert', { value: 1, from: 'km', to: 'm' })).result, 1000);
});

void test('reminder: a real TaskFlow under the default policy, listed while pending; held when start_taskflow asks, the approval makes the flow', { timeout: 60_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());

  const set = resultOf<{ reminder: { id: string; status: string } }>(await execute(brain, 'reminder', { text: 'call the plumber', in_seconds: 3600 }));
  const flow = await call<Taskflow>(brain, 'GET', `/api/taskflows/${set.reminder.id}`);
  assert.equal(flow.status, 200, JSON.stringify(flow.body));
  assert.equal(flow.body.title, 'Reminder: call the plumber');
  assert.equal(flow.body.session_id, 'dashboard');
  assert.deepEqual(flow.body.steps.map((s) => s.type), ['wait', 'note']);
  const waiting = await until(
    () => call<Taskflow>(brain, 'GET', `/api/taskflows/${set.reminder.id}`),
    (r) => r.body.status === 'waiting',
  );
  assert.equal(waiting.body.status, 'waiting');
  const listed = resultOf<{ count: number; reminders: { id: string; text: string; due: string | null }[] }>(await execute(brain, 'reminder', { list: true }));
  assert.deepEqual(listed.reminders.map((r) => [r.id, r.text]), [[set.reminder.id, 'call the plumber']]);
  assert.ok(listed.reminders[0]!.due !== null && Date.parse(listed.reminders[0]!.due) > Date.now(), 'due in the future');

  const policy = await call<unknown>(brain, 'PUT', '/api/approvals/policies', { target: 'start_taskflow', policy: 'ask' });
  assert.equal(policy.status, 200, JSON.stringify(policy.body));
  const heldRun = await execute(brain, 'reminder', { text: 'feed the cat', at: '2099-01-01T08:00:00Z' });
  assert.equal(heldRun.status, 'held', JSON.stringify(heldRun));
  assert.ok(heldRun.request_id);
  const approvals = await call<ApprovalList>(brain, 'GET', '/api/approvals');
  const request = approvals.body.approvals.find((a) => a.request_id === heldRun.request_id);
  assert.equal(request?.tool_name, 'start_taskflow');
  assert.equal(request?.status, 'pending');
  const titles = async (): Promise<string[]> => (await call<TaskflowList>(brain, 'GET', '/api/taskflows')).body.taskflows.map((f) => f.title).sort();
  assert.deepEqual(await titles(), ['Reminder: call the plumber'], 'held: no flow yet');
  const approved = await call<{ status: string }>(brain, 'POST', `/api/approvals/${heldRun.request_id}/approve`);
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  assert.equal(approved.body.status, 'approved');
  assert.deepEqual(await titles(), ['Reminder: call the plumber', 'Reminder: feed the cat']);
});

void test('a one-second timer runs to its note; the daily briefing finds it and a note created over the API', { timeout: 60_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.stop());

  const note = await call<{ id: string }>(brain, 'POST', '/api/memory/note', { text: 'Dentist appointment today at 15:00' });
  assert.equal(note.status, 201, JSON.stringify(note.body));
  const set = resultOf<{ reminder: { id: string } }>(await execute(brain, 'reminder', { text: 'take the laundry out', in_seconds: 1 }));
  const done = await until(
    () => call<Taskflow>(brain, 'GET', `/api/taskflows/${set.reminder.id}`),
    (r) => r.body.status === 'completed' || r.body.status === 'failed',
  );
  assert.equal(done.body.status, 'completed', JSON.stringify(done.body));

  const run = await execute(brain, 'daily-briefing', {});
  const briefing = resultOf<{ text: string; sections: { id: string; template: string }[] }>(run);
  assert.match(briefing.text, /^Good morning\. It is /);
  assert.match(briefing.text, /Dentist appointment today at 15:00/);
  assert.match(briefing.text, /Reminder: take the laundry out/, 'the reminder note, found by the topic "reminder"');
  assert.match(briefing.text, /No devices are connected\./);
  assert.deepEqual(briefing.sections.map((s) => [s.id, s.template]), [
    ['briefing-reminders', 'list'],
    ['briefing-memory', 'list'],
    ['briefing-knowledge', 'list'],
    ['briefing-devices', 'list'],
  ]);
  const detail = await call<SkillDetail>(brain, 'GET', '/api/skills/daily-briefing');
  assert.equal(detail.body.recent_runs[0]?.run_id, run.run_id, 'the run is recorded');
});
