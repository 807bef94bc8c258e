// skills/builtin/reminder through the real sandbox, against the brain's own start_taskflow and
// list_taskflows (daemon/taskflows/taskflow-tools.ts) over a fake engine that checks each flow with the
// real validateFlow: a timer and an absolute time each make one flow of a wait and a note (and a prompt
// with announce), the text reaches the note through {{context.reminder}} and never as a template
// (fast-check over any string, braces, control characters and lone surrogates included), list keeps
// the pending "Reminder: " flows of every session sorted by due time, bad params are refused before
// any call, and a start_taskflow held for approval ends the run as held with the request id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Value } from '@sinclair/typebox/value';
import { resolve } from '../../../daemon/taskflows/templates';
import { CreateTaskflow, NoteStepSpec } from '../../../protocol/taskflows';
import { builtinSkill, flowSummary as summary, held, resultOf, runBuiltin, taskflowRig, type BuiltinRun } from '../builtin-rig';

interface Reminder {
  reminder: { id: string; text: string; due: string; status: string; announce: boolean };
  text: string;
}
interface Listed {
  count: number;
  reminders: { id: string; text: string; due: string | null; status: string; session_id: string }[];
  text: string;
}

/** The note step's text as the engine resolves it when the step runs. */
const noteText = (flow: CreateTaskflow): unknown =>
  (resolve(flow.steps[1], { steps: [{ status: 'succeeded', result: {} }], context: flow.context ?? {}, flow: { id: 'flw_1', title: flow.title, session_id: 'dashboard' }, now: () => '' }) as { text: unknown }).text;

async function refusal(run: Promise<BuiltinRun>): Promise<string> {
  const { outcome, calls } = await run;
  assert.equal(outcome.ok === false && outcome.kill, 'error', JSON.stringify(outcome));
  assert.deepEqual(calls, [], 'refused before any tool call');
  return outcome.ok ? '' : outcome.message;
}

test('the manifest lists exactly start_taskflow and list_taskflows, and no network', async () => {
  const { manifest } = await builtinSkill('reminder');
  assert.deepEqual(manifest.permissions, { network: { allow: [] }, tools: ['start_taskflow', 'list_taskflows'] });
  assert.match(manifest.description, /held/);
});

test('a timer is one flow: wait that many seconds, then store the reminder as a note', async () => {
  const rig = taskflowRig();
  const before = Date.now();
  const run = await runBuiltin('reminder', { text: 'take the bread out', in_seconds: 600 }, rig.tools);
  const out = resultOf<Reminder>(run);
  assert.deepEqual(run.calls.map((c) => c.name), ['start_taskflow']);
  const [flow] = rig.created;
  assert.deepEqual(flow, { title: 'Reminder: take the bread out', session_id: 'dashboard', context: { reminder: 'take the bread out' }, steps: [{ type: 'wait', seconds: 600 }, { type: 'note', text: 'Reminder: {{context.reminder}}' }] });
  assert.equal(noteText(flow), 'Reminder: take the bread out');
  assert.equal(out.reminder.id, 'flw_1');
  assert.equal(out.reminder.status, 'queued');
  const due = Date.parse(out.reminder.due);
  assert.ok(due >= before + 600_000 && due <= Date.now() + 600_000, out.reminder.due);
  assert.match(out.text, /^Reminder set for .*\(in 10 min\): take the bread out$/);
});

test('an absolute time waits until it; announce adds a prompt step for the agent', async () => {
  const rig = taskflowRig();
  const at = '2099-05-01T07:30:00+02:00';
  const out = resultOf<Reminder>(await runBuiltin('reminder', { text: 'call mum', at, announce: true }, rig.tools));
  const steps = rig.created[0]!.steps;
  assert.deepEqual(steps.map((s) => s.type), ['wait', 'note', 'prompt']);
  assert.deepEqual(steps[0], { type: 'wait', until: at });
  assert.match((steps[2] as { text: string }).text, /\{\{context\.reminder\}\}/);
  assert.equal(out.reminder.due, '2099-05-01T05:30:00.000Z');
  assert.equal(out.reminder.announce, true);
  // An offset without a colon, as the engine reads it too.
  const compact = resultOf<Reminder>(await runBuiltin('reminder', { text: 'x', at: '2099-05-01T07:30+0200' }, rig.tools));
  assert.equal(compact.reminder.due, '2099-05-01T05:30:00.000Z');
});

test('property: any text makes a flow the engine accepts, a title that is one line of at most 200, and a note that is exactly the text', async () => {
  const anyChar = fc.oneof(fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), fc.constantFrom('{{', '}}', '{{steps.0.result}}', '{{context.x}}', '\n', ' '));
  await fc.assert(
    fc.asyncProperty(fc.string({ unit: anyChar, minLength: 1, maxLength: 300 }), async (text) => {
      const rig = taskflowRig();
      const { outcome } = await runBuiltin('reminder', { text, in_seconds: 60 }, rig.tools);
      if (!outcome.ok) {
        assert.equal(outcome.kill, 'error', outcome.message);
        assert.match(outcome.message, /^ReminderError: text says what to be reminded of/);
        return;
      }
      const flow = rig.created[0]!;
      assert.ok(Value.Check(CreateTaskflow, flow), `${JSON.stringify(flow.title)} is not a valid flow`);
      assert.ok(flow.title.length <= 200);
      const note = noteText(flow);
      assert.equal(note, `Reminder: ${String(flow.context!.reminder)}`);
      assert.ok(Value.Check(NoteStepSpec, { type: 'note', text: note }), 'memory can store the note');
    }),
    { numRuns: 120 },
  );
});

test('bad params are refused before any call: neither or both times, a time without a zone or in the past, list with a text', async () => {
  const rig = taskflowRig();
  assert.match(await refusal(runBuiltin('reminder', { text: 'x' }, rig.tools)), /^ReminderError: give exactly one of in_seconds .* and at/);
  assert.match(await refusal(runBuiltin('reminder', { text: 'x', in_seconds: 5, at: '2099-01-01T00:00:00Z' }, rig.tools)), /exactly one of/);
  assert.match(await refusal(runBuiltin('reminder', { text: 'x', at: '2099-01-01T00:00:00' }, rig.tools)), /not an ISO 8601 time with Z or an offset/);
  assert.match(await refusal(runBuiltin('reminder', { text: 'x', at: '2001-01-01T00:00:00Z' }, rig.tools)), /is in the past/);
  assert.match(await refusal(runBuiltin('reminder', { text: 'x', at: '2099-02-30T08:00:00Z' }, rig.tools)), /not an ISO 8601 time/, 'a date that does not exist');
  assert.match(await refusal(runBuiltin('reminder', { text: ' \u0001 ', in_seconds: 5 }, rig.tools)), /text says what to be reminded of/);
  assert.match(await refusal(runBuiltin('reminder', { list: true, text: 'x' }, rig.tools)), /list takes no text/);
  assert.deepEqual(rig.created, []);
});

test('list: the pending Reminder flows of every session, soonest first; other and finished flows are left out', async () => {
  const rig = taskflowRig([
    summary('flw_a', 'Reminder: water plants', 'waiting', 4_102_444_800),
    summary('flw_b', 'Water the plants', 'waiting', 100),
    summary('flw_c', 'Reminder: done already', 'completed', null),
    summary('flw_d', 'Reminder: bins out', 'waiting', 4_000_000_000, 'kitchen'),
    summary('flw_e', 'Reminder: just set', 'queued', null),
  ]);
  const run = await runBuiltin('reminder', { list: true }, rig.tools);
  const out = resultOf<Listed>(run);
  assert.deepEqual(rig.listCalls, [{ limit: 50 }], 'all_sessions: no session filter');
  assert.deepEqual(out.reminders.map((r) => [r.id, r.text, r.due, r.session_id]), [
    ['flw_e', 'just set', null, 'dashboard'],
    ['flw_d', 'bins out', '2096-10-02T07:06:40.000Z', 'kitchen'],
    ['flw_a', 'water plants', '2100-01-01T00:00:00.000Z', 'dashboard'],
  ]);
  assert.equal(out.count, 3);
  assert.match(out.text, /^3 pending: due now: just set; 2096-10-02T07:06:40.000Z: bins out; /);
  assert.equal(resultOf<Listed>(await runBuiltin('reminder', { list: true }, taskflowRig().tools)).text, 'No reminders are pending.');
});

test('a start_taskflow held for approval ends the run as held, with the request id', async () => {
  const run = await runBuiltin('reminder', { text: 'stretch', in_seconds: 60 }, { start_taskflow: held('apr_1', 'start_taskflow') });
  assert.equal(run.outcome.ok, false);
  assert.deepEqual(!run.outcome.ok && run.outcome.held, { requestId: 'apr_1', tool: 'start_taskflow' });
  assert.deepEqual(run.calls.map((c) => c.name), ['start_taskflow']);
});
