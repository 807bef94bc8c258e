// protocol/hardware.ts: the shapes of devices, nodes, commands and alerts over HTTP — the command
// statuses and which are final, the list query's bounds, and the dismiss body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { COMMAND_LIST_LIMIT, COMMAND_STATUSES, CommandListQuery, DismissBody, TERMINAL_COMMAND_STATUSES } from '../../protocol/hardware';

void test('the lifecycle\'s final statuses are statuses, and the ones a command can still leave are not final', () => {
  for (const s of TERMINAL_COMMAND_STATUSES) assert.ok(COMMAND_STATUSES.includes(s), s);
  assert.deepEqual(COMMAND_STATUSES.filter((s) => !TERMINAL_COMMAND_STATUSES.includes(s)), ['queued', 'sent', 'pending_confirmation']);
});

void test('the command list query: limit within its bounds, a known status, no other keys', () => {
  assert.ok(Value.Check(CommandListQuery, { limit: COMMAND_LIST_LIMIT.max, device: 'thermo', status: 'timeout' }));
  assert.ok(Value.Check(CommandListQuery, {}));
  for (const bad of [{ limit: 0 }, { limit: COMMAND_LIST_LIMIT.max + 1 }, { limit: 2.5 }, { status: 'done' }, { device: '' }, { other: 1 }]) assert.equal(Value.Check(CommandListQuery, bad), false, JSON.stringify(bad));
});

void test('the dismiss body: an alert id, an optional one-line reason, nothing else', () => {
  assert.ok(Value.Check(DismissBody, { alert_id: 'alert_1', reason: 'summer' }));
  for (const bad of [{}, { alert_id: '' }, { alert_id: 'a', reason: 'two\nlines' }, { alert_id: 'a', snooze: true }]) assert.equal(Value.Check(DismissBody, bad), false, JSON.stringify(bad));
});
